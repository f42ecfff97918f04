/** The signed-in user the client's unit tests' fake service answers `GET /api/auth/me` with (wire form). */
export const me = {
  kind: "user",
  id: "u1",
  name: "Ann",
  email: "ann@example.com",
  workspace: { id: "w1", slug: "acme", name: "Acme" }
}
