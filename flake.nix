{
  description = "Audit timeline and broadcast service: Node, PostgreSQL and Redis for development and tests";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.11";
  inputs.flake-utils.url = "github:numtide/flake-utils";

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = nixpkgs.legacyPackages.${system};
        # Starts a throw-away PostgreSQL (trust auth, database `test`) and Redis
        # under .data/services, on the ports the tests expect.
        services-up = pkgs.writeShellScriptBin "services-up" ''
          set -euo pipefail
          root="''${SERVICES_DIR:-$PWD/.data/services}"
          mkdir -p "$root"
          if [ ! -f "$root/pg/PG_VERSION" ]; then
            initdb -D "$root/pg" -U postgres --auth=trust >/dev/null
          fi
          pg_ctl -D "$root/pg" -l "$root/pg.log" -o "-k $root -h 127.0.0.1 -p 5432" -w start
          psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
            || createdb -h 127.0.0.1 -U postgres test
          redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
            --dir "$root" --logfile "$root/redis.log"
          echo "PostgreSQL on 127.0.0.1:5432 (database test), Redis on 127.0.0.1:6379"
        '';
        services-down = pkgs.writeShellScriptBin "services-down" ''
          root="''${SERVICES_DIR:-$PWD/.data/services}"
          pg_ctl -D "$root/pg" -m fast stop || true
          redis-cli -h 127.0.0.1 -p 6379 shutdown nosave || true
        '';
      in {
        devShells.default = pkgs.mkShell {
          packages = [ pkgs.nodejs_24 pkgs.postgresql_16 pkgs.redis services-up services-down ];
          shellHook = ''
            echo "services-up starts PostgreSQL and Redis for the tests; services-down stops them."
          '';
        };
      });
}
