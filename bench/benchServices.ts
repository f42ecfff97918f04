import { Layer, References } from "effect"
import { ServicesLive, StorageLive } from "../src/app/AppLayer"
import { TracingLive } from "../src/app/TracingLive"
import { AppConfig } from "../src/config/AppConfig"
import type { AppConfigShape } from "../src/config/AppConfig"
import type { PluginRegistry } from "../src/plugins/PluginRegistry"

/**
 * The domain services in the bench's own process, composed as the service
 * and the admin CLI compose them (`AdminLive`): tracing as configured (off
 * without `OTEL_EXPORTER_OTLP_ENDPOINT`), warnings and worse logged.
 */
export const benchServices = (plugins: Layer.Layer<PluginRegistry>, config: Partial<AppConfigShape>) =>
  ServicesLive.pipe(
    Layer.provideMerge(plugins),
    Layer.provideMerge(StorageLive),
    Layer.provideMerge(TracingLive),
    Layer.provideMerge(AppConfig.make(config)),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
