/** What to tell a person about a failed call: the service's own message when it sent one. */
export const errorMessage = (error: unknown): string => {
  if (error instanceof Error && error.message.length > 0) return error.message
  return "Something went wrong. Try again."
}

/** Whether a failed call means "not signed in" (the session ended or never was). */
export const isUnauthorized = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "status" in error && error.status === 401
