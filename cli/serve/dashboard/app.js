// emco dashboard: a single-page app over emco serve's REST API (/v2/) and its
// /dashboard/ endpoints (cli/serve/dashboard.hpp). Plain JS, no framework, no
// external files: it is compiled into emco and works offline.
'use strict';

const state = { config: { actions: false, token: false }, timer: null };
const main = document.getElementById('main');

// h('td', {class: 'x', onclick: f}, 'text', child...): elements built from
// data never go through innerHTML.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'style') {
      // Through the CSSOM: the server's Content-Security-Policy refuses style attributes.
      for (const decl of v.split(';')) {
        const at = decl.indexOf(':');
        if (at > 0) el.style.setProperty(decl.slice(0, at).trim(), decl.slice(at + 1).trim());
      }
    } else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const st = (s) => h('span', { class: 'st st-' + (s || 'Unknown') }, s || '—');
const link = (href, text) => h('a', { href }, text);

class HttpError extends Error {
  constructor(status, text) { super(text.trim() || ('HTTP ' + status)); this.status = status; }
}

// Every request names the dashboard (X-EMCO-Client): the server refuses its
// writes unless started with --allow-actions.
async function api(path, options = {}) {
  const headers = Object.assign({ 'X-EMCO-Client': 'dashboard' }, options.headers || {});
  const token = sessionStorage.getItem('emco-token');
  if (token) headers.Authorization = 'Bearer ' + token;
  const res = await fetch(path, Object.assign({}, options, { headers }));
  const text = await res.text();
  if (res.status === 401) { sessionStorage.removeItem('emco-token'); throw new HttpError(401, 'the server wants a token'); }
  if (!res.ok) throw new HttpError(res.status, text);
  if (!text) return { status: res.status };
  try { return JSON.parse(text); } catch (e) { return text; }
}

const enc = encodeURIComponent;
const name = (r) => (r.metadata && r.metadata.name) || r.name || '';

function setTimer(fn, ms) {
  clearTimer();
  state.timer = setTimeout(fn, ms);
}
function clearTimer() { if (state.timer) clearTimeout(state.timer); state.timer = null; }

function showError(e) {
  if (e instanceof HttpError && e.status === 401) return tokenForm();
  main.replaceChildren(h('div', { class: 'error', id: 'error' }, String(e.message || e)));
}

function tokenForm() {
  const input = h('input', { type: 'password', id: 'token', size: 40, placeholder: 'token' });
  main.replaceChildren(h('h1', {}, 'Token'),
    h('p', {}, 'This server requires the token of its --token-file. It is kept in this tab only.'),
    h('form', { onsubmit: (ev) => { ev.preventDefault(); sessionStorage.setItem('emco-token', input.value.trim()); route(); } },
      input, ' ', h('button', {}, 'Use')));
}

// ---- Fleet: clusters by provider with their labels; filter by label.
async function fleet(params) {
  const providers = await api('/v2/cluster-providers');
  const filter = params.get('label') || '';
  const all = [];
  for (const p of providers) {
    const clusters = await api('/v2/cluster-providers/' + enc(name(p)) + '/clusters?withLabels=true');
    all.push({ provider: name(p), clusters });
  }
  const labels = new Set();
  all.forEach((p) => p.clusters.forEach((c) => (c.labels || []).forEach((l) => labels.add(l.clusterLabel))));
  const total = all.reduce((n, p) => n + p.clusters.length, 0);
  const out = [h('h1', {}, 'Fleet'),
    h('p', { class: 'muted' }, `${all.length} cluster providers, ${total} clusters`),
    h('div', { class: 'toolbar' }, 'Label:',
      h('a', { class: 'chip' + (filter ? '' : ' on'), href: '#/fleet' }, 'any'),
      [...labels].sort().map((l) => h('a', { class: 'chip' + (l === filter ? ' on' : ''), href: '#/fleet?label=' + enc(l) }, l)))];
  for (const p of all) {
    const shown = p.clusters.filter((c) => !filter || (c.labels || []).some((l) => l.clusterLabel === filter));
    const limit = Number(params.get('all') === p.provider ? Infinity : 200);
    out.push(h('h2', {}, `${p.provider} `, h('span', { class: 'muted' }, `(${shown.length} of ${p.clusters.length} clusters) `),
      h('button', { class: 'check', 'data-provider': p.provider, onclick: () => checkProvider(p.provider) }, 'check reachability')));
    if (!shown.length) continue;
    // Each cluster's last `emco cluster check`, as the workspace keeps it.
    out.push(h('table', { class: 'clusters', 'data-provider': p.provider },
      h('tr', {}, h('th', {}, 'cluster'), h('th', {}, 'labels'), h('th', {}, 'description'), h('th', {}, 'reachable'),
        h('th', {}, 'last check'), h('th', {}, 'server'), h('th', {}, 'checks')),
      shown.slice(0, limit).map((c) => {
        const last = c.status && c.status.lastCheck;
        return h('tr', {},
          h('td', {}, name(c)),
          h('td', {}, (c.labels || []).map((l) => h('a', { class: 'chip', href: '#/fleet?label=' + enc(l.clusterLabel) }, l.clusterLabel))),
          h('td', { class: 'muted' }, (c.metadata && c.metadata.description) || ''),
          h('td', { class: 'reachable' }, last ? st(last.reachable ? 'reachable' : 'unreachable') : h('span', { class: 'muted' }, 'not checked')),
          h('td', { class: 'lastcheck counts' }, last ? last.time : ''),
          h('td', { class: 'counts' }, (last && last.serverVersion) || ''),
          h('td', { class: 'counts' }, last ? (last.error || 'all ok') : ''));
      })));
    if (shown.length > limit)
      out.push(h('a', { href: '#/fleet?' + new URLSearchParams({ label: filter, all: p.provider }) }, `show all ${shown.length}`));
  }
  main.replaceChildren(...out);
}

// `emco cluster check` of a provider's clusters: the workspace records each
// cluster's result, which the fleet shows once read again.
async function checkProvider(provider) {
  try {
    await api('/dashboard/check?provider=' + enc(provider));
    await route();
  } catch (e) {
    showError(e);
  }
}

// ---- Projects -> composite apps -> DIGs, with state and revision; running operations.
function digParts(anchor) {
  const m = anchor.replace(/^\/?(v2\/)?/, '').split('/');
  return { project: m[1], app: m[3], version: m[4], dig: m[6], cloud: m[2] === 'logical-clouds' ? m[3] : undefined };
}
const anchorOf = (row) => row.anchor.replace(/^\/?(v2\/)?/, '');

async function projects() {
  const [list, overview] = await Promise.all([api('/v2/projects'), api('/dashboard/overview')]);
  const digs = overview.resources.filter((r) => anchorOf(r).includes('/deployment-intent-groups/'));
  const out = [h('h1', {}, 'Projects')];
  out.push(operations(overview));
  for (const p of list) {
    const project = name(p);
    out.push(h('h2', {}, 'Project ' + project));
    const apps = await api('/v2/projects/' + enc(project) + '/composite-apps');
    if (!apps.length) { out.push(h('p', { class: 'muted' }, 'no composite apps')); continue; }
    const rows = [];
    for (const ca of apps) {
      const version = (ca.spec && ca.spec.compositeAppVersion) || '';
      const mine = digs.filter((d) => { const x = digParts(anchorOf(d)); return x.project === project && x.app === name(ca) && x.version === version; });
      if (!mine.length) rows.push(h('tr', {}, h('td', {}, name(ca)), h('td', {}, version), h('td', { class: 'muted', colspan: 5 }, 'no deployment intent groups')));
      for (const d of mine) {
        const x = digParts(anchorOf(d));
        rows.push(h('tr', { class: 'dig' }, h('td', {}, name(ca)), h('td', {}, version),
          h('td', {}, link('#/dig/' + anchorOf(d), x.dig)), h('td', {}, st(d.state)), h('td', {}, st(d.deployedStatus)),
          h('td', {}, String(d.revision)), h('td', { class: 'counts' }, countsText(d.deployedCounts))));
      }
    }
    out.push(h('table', {}, h('tr', {}, ['composite app', 'version', 'deployment intent group', 'state', 'deployed', 'revision', 'resources'].map((t) => h('th', {}, t))), rows));
  }
  main.replaceChildren(...out);
  if (overview.queued.length) setTimer(route, 2000);
}

function countsText(c) {
  return Object.entries(c || {}).map(([k, v]) => `${v} ${k}`).join(', ');
}

// Progress of a context: the share of its resources no longer Pending.
function progress(counts) {
  const total = Object.values(counts || {}).reduce((a, b) => a + b, 0);
  const pending = (counts || {}).Pending || 0;
  const pct = total ? Math.round(100 * (total - pending) / total) : 0;
  return h('span', { class: 'op-progress', 'data-pct': pct },
    h('span', { class: 'progress' }, h('span', { style: `width:${pct}%` })), ` ${pct}% (${total - pending}/${total})`);
}

function operations(overview) {
  const box = h('div', { id: 'operations' }, h('h2', {}, 'Running operations'));
  if (!overview.queued.length) { box.append(h('p', { class: 'muted' }, 'none')); return box; }
  const byContext = new Map(overview.resources.map((r) => [r.context, r]));
  box.append(h('table', {}, h('tr', {}, ['resource', 'status', 'progress', 'delivering'].map((t) => h('th', {}, t))),
    overview.queued.map((q) => {
      const r = byContext.get(q.context);
      return h('tr', {}, h('td', {}, r ? link('#/dig/' + anchorOf(r), anchorOf(r)) : q.owner), h('td', {}, st(q.status)),
        h('td', {}, progress(r && r.deployedCounts)), h('td', {}, q.running ? 'yes' : 'queued'));
    })));
  return box;
}

// ---- A DIG: summary, actions, progress, matrix, detail, history.
const RUNNING = /ing$/;  // Instantiating, Updating, Terminating

async function dig(anchor, params) {
  const view = { status: params.get('status') || 'deployed', by: params.get('by') || 'provider',
    group: params.get('group'), offset: Number(params.get('offset') || 0), app: params.get('app'), cluster: params.get('cluster'),
    plan: params.get('plan') };
  const here = (over) => '#/dig/' + anchor + '?' + new URLSearchParams(Object.entries(Object.assign({}, view, over))
    .filter(([, v]) => v !== null && v !== undefined && v !== ''));
  const summary = await api('/v2/' + anchor + '/status?status=deployed&output=summary');
  const q = new URLSearchParams({ dig: anchor, status: view.status, by: view.by, offset: view.offset, limit: 50 });
  if (view.group !== null) q.set('group', view.group);
  const matrix = await api('/dashboard/matrix?' + q);
  const actions = (summary.states && summary.states.actions) || [];
  const last = actions.length ? actions[actions.length - 1] : {};
  // The state is recorded when the operation is accepted (a terminate reads
  // Terminated at once) and the deployed status follows as the server
  // delivers: until it has caught up, the operation is still running.
  const goal = { Instantiated: 'Instantiated', Terminated: 'Terminated' }[last.state];
  const catchingUp = goal !== undefined && summary.deployedStatus !== goal && !/Failed$/.test(summary.deployedStatus || '');
  const running = RUNNING.test(summary.deployedStatus || '') || ((summary.deployedCounts || {}).Pending || 0) > 0 ||
    RUNNING.test(last.state || '') || catchingUp;
  const x = digParts(anchor);
  const out = [h('h1', {}, `DIG ${x.dig} `, h('span', { class: 'muted' }, `${x.project} / ${x.app} ${x.version}`)),
    h('div', { class: 'toolbar', id: 'summary' }, 'state', st(last.state), 'deployed', h('span', { id: 'deployed-status' }, st(summary.deployedStatus)),
      'revision', h('span', { id: 'revision' }, String(actions.reduce((r, a) => (a.state === 'Instantiated' && a.revision ? a.revision : r), 0))),
      summary.deployedCounts ? h('span', { id: 'progress', 'data-running': running }, progress(summary.deployedCounts)) : null,
      h('span', { class: 'counts' }, countsText(summary.deployedCounts)), running ? h('span', { class: 'muted' }, 'refreshing every second') : null)];
  out.push(actionBar(anchor, last.state));
  out.push(planBox(anchor, view.plan === '1', here));
  if (view.plan === '1') out.push(await planOf(anchor));
  out.push(h('h2', {}, 'Apps × clusters'));
  out.push(h('div', { class: 'toolbar' },
    'status', ['deployed', 'ready'].map((s) => h('a', { class: 'chip' + (s === view.status ? ' on' : ''), href: here({ status: s, offset: 0 }) }, s)),
    'by', ['provider', 'label', 'cluster'].map((b) => h('a', { class: 'chip' + (b === view.by ? ' on' : ''), href: here({ by: b, group: null, offset: 0 }) }, b)),
    view.group !== null ? ['group', h('b', {}, view.group || '(empty)'), link(here({ group: null, offset: 0 }), 'back to all')] : null));
  out.push(matrixTable(matrix, view, here));
  if (view.app && view.cluster) out.push(await detail(anchor, view));
  out.push(h('h2', {}, 'State history'));
  out.push(h('table', { id: 'history' }, h('tr', {}, ['#', 'state', 'revision', 'instance', 'time'].map((t) => h('th', {}, t))),
    actions.map((a, i) => h('tr', {}, h('td', {}, String(i + 1)), h('td', {}, st(a.state)), h('td', {}, String(a.revision || 0)),
      h('td', { class: 'muted' }, a.instance || ''), h('td', { class: 'muted' }, a.time || '')))));
  main.replaceChildren(...out);
  if (running) setTimer(route, 1000);
}

const COLORS = { Applied: 'var(--ok)', Ready: 'var(--ok)', Committed: 'var(--ok)', Pending: 'var(--warn)', NotReady: 'var(--warn)',
  Failed: 'var(--bad)', Retrying: 'var(--bad)', NotPresent: 'var(--bad)' };

function matrixTable(m, view, here) {
  const drill = view.group !== null;
  const head = h('tr', {}, h('th', {}, 'app'), m.columns.map((c) => h('th', {},
    drill ? c.name : link(here({ group: c.name, offset: 0 }), c.name),
    drill ? null : h('div', { class: 'counts' }, `${c.clusters} clusters`))));
  const rows = m.rows.map((r) => h('tr', {}, h('td', {}, h('b', {}, r.app)), r.cells.map((cell, i) => {
    const col = m.columns[i].name;
    if (drill) {
      return h('td', { class: 'cell', 'data-app': r.app, 'data-cluster': col, 'data-status': cell || '',
        onclick: () => { location.hash = here({ app: r.app, cluster: col }); } }, cell ? st(cell) : h('span', { class: 'muted' }, '—'));
    }
    const total = Object.values(cell).reduce((a, b) => a + b, 0);
    return h('td', { class: 'cell', 'data-app': r.app, 'data-group': col, onclick: () => { location.hash = here({ group: col, offset: 0 }); } },
      h('div', { class: 'bar' }, Object.entries(cell).map(([s, n]) => h('span', { title: `${n} ${s}`, style: `width:${100 * n / total}%;background:${COLORS[s] || 'var(--idle)'}` }))),
      h('div', { class: 'counts' }, countsText(cell) || '—'));
  })));
  const parts = [h('table', { class: 'matrix', id: 'matrix', 'data-by': m.by, 'data-status': m.status }, head, rows)];
  // Columns come a page of 50 at a time, whatever the fleet's size.
  const shown = m.columns.length;
  const what = drill || m.by === 'cluster' ? 'clusters' : m.by + 's';
  parts.push(h('div', { class: 'toolbar', id: 'pager' }, `${what} ${m.total ? m.offset + 1 : 0}–${m.offset + shown} of ${m.total}`,
    m.offset > 0 ? link(here({ offset: Math.max(0, m.offset - 50) }), '← previous') : null,
    m.offset + shown < m.total ? link(here({ offset: m.offset + 50 }), 'next →') : null,
    drill ? null : h('span', { class: 'muted' }, 'click a column or cell to see its clusters')));
  return h('div', {}, ...parts);
}

// The plan of an instantiate or update of the DIG's current intents (what
// `emco dig plan` prints), on demand: it renders every app.
function planBox(anchor, shown, here) {
  return h('div', { class: 'toolbar' }, h('b', {}, 'Plan'),
    shown ? link(here({ plan: null }), 'hide') : link(here({ plan: '1' }), 'show what an instantiate or update would change'));
}

async function planOf(anchor) {
  const p = await api('/dashboard/plan?dig=' + enc(anchor));
  const s = p.summary || {};
  const box = h('div', { id: 'plan' }, h('p', {}, p.running ? `against the running context ${p.running}: ` : 'nothing running: ',
    h('b', {}, `${s.create || 0} to create, ${s.change || 0} to change, ${s.delete || 0} to delete`)));
  for (const c of p.changes || []) {
    box.append(h('div', {}, h('b', {}, c.app), ' on ', c.clusters.join(', ')),
      h('ul', {}, (c.create || []).map((r) => h('li', {}, '+ create ' + r)), (c.delete || []).map((r) => h('li', {}, '- delete ' + r)),
        (c.change || []).map((d) => h('li', {}, '~ change ' + d.resource, h('pre', {}, d.diff)))));
  }
  return box;
}

async function detail(anchor, view) {
  const q = new URLSearchParams({ status: view.status, output: 'detail', app: view.app, cluster: view.cluster });
  const s = await api('/v2/' + anchor + '/status?' + q);
  const field = view.status === 'ready' ? 'readyStatus' : 'deployedStatus';
  const box = h('div', { id: 'detail' }, h('h2', {}, `${view.app} on ${view.cluster}`));
  for (const a of s.apps || []) for (const c of a.clusters || []) {
    box.append(h('table', {}, h('tr', {}, ['kind', 'name', 'status', 'message'].map((t) => h('th', {}, t))),
      (c.resources || []).map((r) => h('tr', {}, h('td', {}, (r.GVK && r.GVK.Kind) || ''), h('td', {}, r.name),
        h('td', {}, st(r[field])), h('td', { class: 'muted' }, r.message || r.commit || '')))));
    for (const r of c.resources || []) if (r.detail)
      box.append(h('details', {}, h('summary', {}, `${(r.GVK && r.GVK.Kind) || ''} ${r.name} (live object)`), h('pre', {}, JSON.stringify(r.detail, null, 2))));
  }
  return box;
}

const OPERATIONS = ['approve', 'instantiate', 'update', 'rollback', 'stop', 'terminate'];

function actionBar(anchor, current) {
  if (!state.config.actions)
    return h('p', { class: 'muted', id: 'actions' }, 'Read-only: start emco serve with --allow-actions to approve, instantiate, update, roll back, stop or terminate from here.');
  return h('div', { class: 'toolbar', id: 'actions' }, 'actions:', OPERATIONS.map((op) =>
    h('button', { 'data-op': op, onclick: () => act(anchor, op, current) }, op)));
}

async function act(anchor, op, current) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = `${op} ${anchor}? (state now: ${current || 'none'})`;
  const extra = document.getElementById('confirm-extra');
  const revision = h('input', { id: 'confirm-revision', size: 4, value: '1' });
  extra.replaceChildren(...(op === 'rollback' ? ['to revision ', revision] : []));
  dialog.returnValue = '';
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener('close', resolve, { once: true }));
  if (dialog.returnValue !== 'ok') return;
  const body = op === 'rollback' ? JSON.stringify({ metadata: { description: 'from the dashboard' }, spec: { revision: revision.value } }) : '';
  try {
    await api('/v2/' + anchor + '/' + op, { method: 'POST', body, headers: body ? { 'Content-Type': 'application/json' } : {} });
    await route();
    main.prepend(h('div', { class: 'notice', id: 'notice' }, `${op}: accepted`));
  } catch (e) {
    await route();
    main.prepend(h('div', { class: 'error', id: 'error' }, `${op}: ${e.message}`));
  }
}

// ---- Logical clouds of every project.
async function clouds() {
  const [list, overview] = await Promise.all([api('/v2/projects'), api('/dashboard/overview')]);
  const byAnchor = new Map(overview.resources.map((r) => [anchorOf(r), r]));
  const out = [h('h1', {}, 'Logical clouds')];
  const rows = [];
  for (const p of list) {
    for (const lc of await api('/v2/projects/' + enc(name(p)) + '/logical-clouds')) {
      const anchor = `projects/${name(p)}/logical-clouds/${name(lc)}`;
      const refs = await api('/v2/' + anchor + '/cluster-references');
      const r = byAnchor.get(anchor) || {};
      rows.push(h('tr', {}, h('td', {}, name(p)), h('td', {}, name(lc)), h('td', {}, (lc.spec && lc.spec.level) || ''),
        h('td', {}, (lc.spec && lc.spec.namespace) || ''), h('td', {}, st(r.state)), h('td', {}, st(r.deployedStatus)),
        h('td', {}, refs.map((c) => h('span', { class: 'chip' }, `${c.spec.clusterProvider}+${c.spec.cluster}`)))));
    }
  }
  out.push(rows.length ? h('table', { id: 'clouds' }, h('tr', {}, ['project', 'logical cloud', 'level', 'namespace', 'state', 'deployed', 'clusters'].map((t) => h('th', {}, t))), rows)
    : h('p', { class: 'muted' }, 'no logical clouds'));
  main.replaceChildren(...out);
}

// ---- Routing: #/fleet, #/projects, #/clouds, #/dig/<anchor>?...
async function route() {
  clearTimer();
  const hash = location.hash.replace(/^#\/?/, '') || 'fleet';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const [page, ...rest] = path.split('/');
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.route === page || (page === 'dig' && a.dataset.route === 'projects'));
  if (state.config.token && !sessionStorage.getItem('emco-token')) return tokenForm();
  try {
    if (page === 'fleet') await fleet(params);
    else if (page === 'projects') await projects();
    else if (page === 'clouds') await clouds();
    else if (page === 'dig') await dig(rest.join('/'), params);
    else main.replaceChildren(h('p', {}, 'No such page: ' + page));
    document.body.dataset.page = page;
  } catch (e) {
    showError(e);
  }
  main.dataset.hash = location.hash;  // what is shown (the browser test waits for it)
}

(async () => {
  try { state.config = await api('/dashboard/config'); } catch (e) { showError(e); return; }
  document.getElementById('mode').textContent = state.config.actions ? 'actions allowed' : 'read-only';
  window.addEventListener('hashchange', route);
  await route();
})();
