/** The web terminal's HTTP server: the page, its scripts, and a WebSocket per tab bridged to a daemon terminal. */

import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocketServer } from "ws";
import { MAX_TAB_MESSAGE_BYTES, Session } from "./session.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MODULES = join(ROOT, "node_modules");

/** URL prefixes and the folders they serve: the page, and the two renderers as their packages ship them. */
const FOLDERS = [
  ["/vendor/ghostty-web/", join(MODULES, "ghostty-web", "dist")],
  ["/vendor/xterm/", join(MODULES, "@xterm", "xterm")],
  ["/vendor/addon-fit/", join(MODULES, "@xterm", "addon-fit", "lib")],
  ["/", join(ROOT, "public")],
];

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".map": "application/json",
};

/** How long a plain HTTP request (the page, a script) may take to arrive whole, and its headers: a client that
 * sends half a request is cut then. A tab's WebSocket is no longer a request once upgraded: it stays open as
 * long as the tab, however quiet. */
export const REQUEST_TIMEOUT_MS = 10_000;
const HEADERS_TIMEOUT_MS = 5_000;

/** How often Node looks for requests past those timeouts. */
const TIMEOUT_CHECK_MS = 1_000;

/** How many tabs may be connected at once; more are refused (each holds a subscription in the daemon). */
export const MAX_TABS = 64;

/** A tab id: what the page makes (letters, digits, `-`), bounded so an attachment id stays short. */
const TAB_ID = /^[A-Za-z0-9-]{1,64}$/;

/** The largest terminal size a tab may ask for (the daemon refuses larger ones too, SPEC's limits). */
const MAX_CELLS_SIDE = 1000;

/** Serves terminal `id` of `daemon` on `host:port` (0: any free port). Resolves once listening, with its URL
 * and `close()`, which ends every tab's subscription (the terminal goes on in the daemon). */
export async function startWebTerminal({ daemon, id, host = "127.0.0.1", port = 0 }) {
  /** @type {Set<Session>} */
  const sessions = new Set();
  const timeouts = {
    requestTimeout: REQUEST_TIMEOUT_MS,
    headersTimeout: HEADERS_TIMEOUT_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
  };
  const server = createServer(timeouts, (request, response) => {
    serve(request.url ?? "/", response).catch(() => {
      if (!response.headersSent) {
        response.writeHead(500);
      }
      response.end();
    });
  });
  const sockets = new WebSocketServer({ server, path: "/tab", maxPayload: MAX_TAB_MESSAGE_BYTES });
  sockets.on("connection", (socket, request) => {
    // A page of another site, open in the same browser, must not reach the shell: a browser always names the
    // page's origin, which must be this server's. (A program that sends no origin is no browser page.)
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host}` && origin !== `https://${request.headers.host}`) {
      socket.close(1008, "this page's origin may not connect");
      return;
    }
    const query = new URL(request.url ?? "/", "http://localhost").searchParams;
    const tab = query.get("tab") ?? "";
    const cols = Number(query.get("cols"));
    const rows = Number(query.get("rows"));
    const within = (value) => Number.isInteger(value) && value > 0 && value <= MAX_CELLS_SIDE;
    if (!TAB_ID.test(tab) || !within(cols) || !within(rows)) {
      socket.close(1008, "needs tab (letters, digits, -), cols and rows");
      return;
    }
    if (sessions.size >= MAX_TABS) {
      socket.close(1013, `at most ${MAX_TABS} tabs`);
      return;
    }
    const session = new Session(daemon, id, tab, socket, { cols, rows, observe: query.get("observe") === "1" });
    sessions.add(session);
    session.run().finally(() => sessions.delete(session));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const address = server.address();
  const url = `http://${host}:${typeof address === "object" && address ? address.port : port}/?pty=${id}`;
  return {
    url,
    close: async () => {
      for (const session of sessions) {
        session.close();
      }
      sockets.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/** Answers a GET with a file from one of `FOLDERS`, never one outside them. */
async function serve(url, response) {
  const path = decodeURIComponent(new URL(url, "http://localhost").pathname);
  for (const [prefix, folder] of FOLDERS) {
    if (!path.startsWith(prefix)) {
      continue;
    }
    const relative = path.slice(prefix.length) || "index.html";
    const file = normalize(join(folder, relative));
    if (!file.startsWith(folder + sep)) {
      break;
    }
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) {
      break;
    }
    response.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": info.size,
      "cache-control": "no-store",
    });
    createReadStream(file).pipe(response);
    return;
  }
  response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
  response.end("not found\n");
}
