// The minimal Node proxy of the HTTP proxy benchmark: node:http in, an undici Pool out, no
// routing, logging or metrics. `node node_undici_proxy.mjs UPSTREAM_URL PORT`.
import http from "node:http";
import { pipeline } from "node:stream";
import { Pool } from "undici";

const [upstream, port] = process.argv.slice(2);
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 60_000 });
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const headers = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (!HOP_BY_HOP.has(name)) headers[name] = req.rawHeaders[i + 1];
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  pool.request({ path: req.url, method: req.method, headers, body: hasBody ? req : null }).then(
    ({ statusCode, headers: answer, body }) => {
      for (const name of ["connection", "keep-alive", "transfer-encoding"]) delete answer[name];
      res.writeHead(statusCode, answer);
      pipeline(body, res, () => {});
    },
    () => {
      res.writeHead(502);
      res.end();
    },
  );
}).listen(Number(port), "127.0.0.1");
