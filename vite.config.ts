import react from "@vitejs/plugin-react"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * The web page (`web/`), built into `dist/web`, which the service serves at
 * `/` (`npm run build:web`; `npm start` builds first). `npx vite --config
 * vite.config.ts` serves it with hot reload on :5173, passing `/api` to a
 * service running on :3000.
 */
export default defineConfig({
  root: here("./web"),
  plugins: [react()],
  build: {
    outDir: here("./dist/web"),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024
  },
  server: {
    proxy: { "/api": { target: "http://127.0.0.1:3000", changeOrigin: false } }
  }
})
