import { createClient } from "../../src/client"

/** The page's one client: same origin, the session cookie, the browser's fetch and EventSource. */
export const client = createClient()
