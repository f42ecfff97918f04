# Source this file (`. scripts/use-node.sh`) to run the project on Node >= 22.19
# (package.json "engines"). When the Node on PATH is older, it installs Node 24
# LTS from the npm registry (the platform's `node-<os>-<cpu>` package ships the
# binary) into the ignored .tools/ folder once, and puts it first on PATH for
# this shell: npm and every script then run on it. .ci/run sources it too.
_node_ok() {
  command -v node >/dev/null && node -e '
    const [a, b] = process.versions.node.split(".").map(Number)
    process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'
}
if ! _node_ok; then
  _tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/node24"
  _platform="node-$(node -p process.platform)-$(node -p process.arch)"
  if [[ ! -x "$_tools/node_modules/$_platform/bin/node" ]]; then
    echo "Node $(node --version) is older than 22.19: installing $_platform@24 into $_tools" >&2
    mkdir -p "$_tools"
    [[ -f "$_tools/package.json" ]] || echo '{ "private": true }' >"$_tools/package.json"
    npm install --prefix "$_tools" --no-audit --no-fund --no-save "$_platform@24" >&2
  fi
  export PATH="$_tools/node_modules/$_platform/bin:$PATH"
  unset _tools _platform
fi
unset -f _node_ok
