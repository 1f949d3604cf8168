/**
 * How a `network: limited` sandbox reaches the egress proxy. Inside its own
 * network namespace only loopback exists, so the proxy (a Unix socket of the
 * daemon, bound into the sandbox at EGRESS_SOCKET) is brought to a port
 * there: before the shell starts, a small node process listens on
 * 127.0.0.1:EGRESS_PORT and forwards each connection to the socket. It is
 * the agent's own process (it may kill it, and lose the network); the
 * socket is the boundary, and the proxy behind it decides.
 *
 * The launcher waits for the bridge's "ready" line (at most 10 s) so the
 * first command finds the port open; a bridge that fails to start leaves
 * the shell without a network, never with more of one.
 */
import fs from 'node:fs';

/** Where the proxy's socket is inside the sandbox (bwrap), and the port the bridge listens on. */
export const EGRESS_SOCKET = '/run/openboa/egress.sock';
export const EGRESS_PORT = 3128;
/** Where node is inside the sandbox when the daemon's node is not under /usr (bound read-only). */
const SANDBOX_NODE = '/run/openboa/node';

/** The bridge: 127.0.0.1:<port> → <socket>, byte for byte, each side's end passed on. */
const BRIDGE_JS = [
  "const net=require('net');const[,s,p]=process.argv;",
  'net.createServer({allowHalfOpen:true},c=>{const u=net.connect({path:s,allowHalfOpen:true});',
  'const k=()=>{c.destroy();u.destroy()};c.on("error",k);u.on("error",k);c.on("close",k);u.on("close",k);c.pipe(u);u.pipe(c)})',
  ".listen({port:+p,host:'127.0.0.1'},()=>process.stdout.write('ready\\n'))",
].join('');

/** Starts the bridge in the background, waits for it, then becomes the command ($5...). */
const LAUNCH = 'exec 3< <(exec "$1" -e "$2" "$3" "$4" </dev/null 2>/dev/null); IFS= read -r -t 10 __ob_ready <&3; exec 3<&-; unset __ob_ready; shift 4; exec "$@"';

/** Where the daemon's node binary is inside a bwrap sandbox, and the bind that puts it there if needed. */
function sandboxNode(): { path: string; bind: string[] } {
  const exe = fs.realpathSync(process.execPath);
  if (exe.startsWith('/usr/')) return { path: exe, bind: [] };
  return { path: SANDBOX_NODE, bind: ['--ro-bind', exe, SANDBOX_NODE] };
}

/**
 * bwrap arguments and the wrapped argv for a sandbox whose only way out is
 * the proxy at `socket` (a host path): the socket and (when needed) node
 * bound in, the command started behind the bridge.
 */
export function bwrapEgress(socket: string, argv: string[]): { binds: string[]; argv: string[] } {
  const node = sandboxNode();
  return {
    binds: ['--ro-bind', socket, EGRESS_SOCKET, ...node.bind],
    argv: ['/bin/bash', '-c', LAUNCH, 'openboa-egress', node.path, BRIDGE_JS, EGRESS_SOCKET, String(EGRESS_PORT), ...argv],
  };
}

/** The wrapped argv where the host's files are visible (unshare-net): the bridge reaches the socket by its host path. */
export function hostEgress(socket: string, argv: string[]): string[] {
  return ['/bin/bash', '-c', LAUNCH, 'openboa-egress', process.execPath, BRIDGE_JS, socket, String(EGRESS_PORT), ...argv];
}

/** The shell's proxy variables: curl, wget, npm, pip, git and apt read them. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${EGRESS_PORT}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
  };
}
