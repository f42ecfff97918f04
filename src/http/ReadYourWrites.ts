import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { commitLsnHeader, formatLsn, parseLsn } from "../api/CommitPosition"
import { CommitRecorder, ReadPlacement } from "../db/ReadPlacement"

/**
 * Read-your-writes over a replica (docs/scale-out.md, "Read replicas"), per
 * request: its reads wait for the position it sends in `X-Commit-LSN` (or go
 * to the replica at once when it sends none), and its answer names the
 * highest commit position of the transactions it committed, in the same
 * header. A value that is no LSN is ignored: the read is then served as one
 * sent without it. Without a replica (`enabled` false) this is no step at all.
 */
export const readYourWrites =
  (enabled: boolean) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    enabled
      ? Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const seen = parseLsn(request.headers[commitLsnHeader])
          let committed: bigint | undefined
          yield* HttpEffect.appendPreResponseHandler((_request, response) =>
            Effect.succeed(
              committed === undefined
                ? response
                : HttpServerResponse.setHeader(response, commitLsnHeader, formatLsn(committed))
            )
          )
          return yield* app.pipe(
            Effect.provideService(
              ReadPlacement,
              seen === undefined ? { _tag: "replica" } : { _tag: "after", lsn: seen }
            ),
            Effect.provideService(CommitRecorder, {
              active: true,
              record: (lsn) => {
                if (committed === undefined || lsn > committed) committed = lsn
              }
            })
          )
        })
      : app
