/**
 * A stand-in GitLab on 127.0.0.1 for the GitLab CI recipe: git over HTTP through the real
 * `git http-backend` (CGI), with GitLab's two credentials — the CI job token may clone but not
 * push, a project access token (user `oauth2`) may push — and the merge-request notes API the
 * recipe uses (list, paged and newest first as GitLab lists them, create, update; `PRIVATE-TOKEN`
 * checked; an outage on demand).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface FakeGitlab {
  port: number;
  /** While true, every notes API call answers 502 (an outage, a token without api scope answers 403). */
  failNotes: boolean;
  /** Notes per merge request iid. */
  notes: Map<number, { id: number; body: string }[]>;
  /** Pushes refused because the credential may not push. */
  refusedPushes: number;
  stop(): Promise<void>;
}

export async function startFakeGitlab(root: string, opts: { projectId: number; jobToken: string; accessToken: string }): Promise<FakeGitlab> {
  const notes = new Map<number, { id: number; body: string }[]>();
  let nextId = 100;
  const state = { refusedPushes: 0 };
  const control = { failNotes: false };
  const json = (res: ServerResponse, code: number, value: unknown) => res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(value));

  const api = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (req.headers['private-token'] !== opts.accessToken) return json(res, 401, { message: '401 Unauthorized' });
    if (control.failNotes) return json(res, 502, { message: '502 Bad Gateway' });
    const m = /^\/api\/v4\/projects\/(\d+)\/merge_requests\/(\d+)\/notes(?:\/(\d+))?(?:\?.*)?$/.exec(req.url ?? '');
    if (!m || Number(m[1]) !== opts.projectId) return json(res, 404, { message: '404 Not Found' });
    const list = notes.get(Number(m[2])) ?? [];
    notes.set(Number(m[2]), list);
    if (req.method === 'GET' && !m[3]) {
      // As GitLab lists notes: newest first (sort=desc by created_at), per_page (default 20, at most 100) a page.
      const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
      const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 20) || 20));
      const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
      return json(res, 200, [...list].reverse().slice((page - 1) * perPage, page * perPage));
    }
    const text = (JSON.parse(body.toString('utf8') || '{}') as { body?: string }).body;
    if (typeof text !== 'string') return json(res, 400, { message: 'body is missing' });
    if (req.method === 'POST' && !m[3]) {
      const note = { id: nextId++, body: text };
      list.push(note);
      return json(res, 201, note);
    }
    const note = list.find((n) => n.id === Number(m[3]));
    if (req.method === 'PUT' && note) {
      note.body = text;
      return json(res, 200, note);
    }
    return json(res, 404, { message: '404 Not Found' });
  };

  const gitHttp = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const [path, query = ''] = (req.url ?? '').split('?');
    const auth = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
    const [user, password] = [auth.slice(0, auth.indexOf(':')), auth.slice(auth.indexOf(':') + 1)];
    const canRead = (user === 'gitlab-ci-token' && password === opts.jobToken) || (user === 'oauth2' && password === opts.accessToken);
    if (!canRead) return res.writeHead(401, { 'www-authenticate': 'Basic realm="GitLab"' }).end();
    const pushing = query.includes('service=git-receive-pack') || path!.endsWith('/git-receive-pack');
    if (pushing && user !== 'oauth2') {
      state.refusedPushes++;
      return res.writeHead(403).end('You are not allowed to push code to this project.\n');
    }
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: path!,
      QUERY_STRING: query,
      REQUEST_METHOD: req.method ?? 'GET',
      REMOTE_USER: user,
      REMOTE_ADDR: '127.0.0.1',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      CONTENT_LENGTH: String(body.length),
      GIT_CONFIG_NOSYSTEM: '1',
    };
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding']);
    if (req.headers['git-protocol']) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
    const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    cgi.stdout.on('data', (d: Buffer) => out.push(d));
    cgi.stderr.resume();
    cgi.on('close', () => {
      const all = Buffer.concat(out);
      let split = all.indexOf('\r\n\r\n');
      let sep = 4;
      if (split < 0) {
        split = all.indexOf('\n\n');
        sep = 2;
      }
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of all.subarray(0, split).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers).end(all.subarray(split + sep));
    });
    // http-backend may answer (an error, an empty negotiation) before reading all of its input.
    cgi.stdin.on('error', () => undefined);
    cgi.on('error', () => res.writeHead(500).end());
    cgi.stdin.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if ((req.url ?? '').startsWith('/api/v4/')) api(req, res, body);
      else gitHttp(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    notes,
    get failNotes() {
      return control.failNotes;
    },
    set failNotes(v: boolean) {
      control.failNotes = v;
    },
    get refusedPushes() {
      return state.refusedPushes;
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
