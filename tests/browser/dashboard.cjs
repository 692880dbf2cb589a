// The dashboard in headless Chromium (run by scripts/browser-test.sh, which
// sets up the workspace and the servers): RW is `emco serve --allow-actions`,
// RO the same workspace read-only, REMOTE a server on 127.0.0.2 with a token
// and TLS. Every check throws on failure; screenshots go to SHOTS.
'use strict';
const puppeteer = require('puppeteer-core');
const { execFileSync, spawnSync } = require('child_process');
const path = require('path');

const env = (k) => { if (!process.env[k]) throw new Error('missing ' + k); return process.env[k]; };
const EMCO = env('EMCO'), SHOTS = env('SHOTS'), RW = env('RW'), RO = env('RO'), REMOTE = env('REMOTE');
const DIG = 'projects/quickstart/composite-apps/hello-app/v1/deployment-intent-groups/hello-dig';
let failures = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failures++;
}
const emco = (...args) => execFileSync(EMCO, args, { encoding: 'utf8' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, name + '.png'), fullPage: true });

async function open(browser, url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 760 });
  page.on('pageerror', (e) => check(false, 'no script error on ' + url + ': ' + e.message));
  await page.goto(url, { waitUntil: 'load' });
  return page;
}
async function go(page, hash, selector) {
  await page.bringToFront();  // a background tab gets no animation frames, which the waits poll with
  await page.evaluate((h) => { location.hash = h; }, hash);
  try {
    await page.waitForFunction((h) => document.getElementById('main').dataset.hash === h, { timeout: 20000, polling: 100 }, hash);
    await page.waitForSelector(selector, { timeout: 20000 });
  } catch (e) {
    const shown = await page.evaluate(() => [location.hash, document.getElementById('main').dataset.hash, document.getElementById('main').innerText.slice(0, 300)]);
    throw new Error(`${hash} (${selector}) did not render: ${e.message}; shown: ${JSON.stringify(shown)}`);
  }
}
const texts = (page, sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent.trim()));
// fetch from the page, as the dashboard's own code would.
const fetchStatus = (page, url, init) => page.evaluate(async (u, i) => (await fetch(u, i)).status, url, init || {});

// The status `emco dig status` prints, per cluster: the worst of the app's resources.
function cliCells(status) {
  const j = JSON.parse(emco('dig', 'status', 'quickstart/hello-app/v1/hello-dig', '-o', 'json', '--status', status, '--output', 'all'));
  const field = status === 'ready' ? 'readyStatus' : 'deployedStatus';
  const order = ['Failed', 'Retrying', 'NotPresent', 'NotReady', 'Unknown', 'Pending', 'Skipped', 'Deleted', 'Committed', 'Applied', 'Ready'];
  const out = {};
  for (const c of j.apps[0].clusters) {
    let worst = null;
    for (const r of c.resources) if (worst === null || order.indexOf(r[field]) < order.indexOf(worst)) worst = r[field];
    out[c.clusterProvider + '+' + c.cluster] = worst;
  }
  return out;
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: env('CHROME'), headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--ignore-certificate-errors'],
  });
  try {
    const rw = await open(browser, RW + '/');

    // Fleet: clusters by provider with labels, filter by label.
    await go(rw, '#/fleet', 'table.clusters tr td');
    check((await texts(rw, 'table.clusters td:first-child')).join(',') === 'edge1,edge2,edge3', 'fleet lists edge1..3 under edge');
    await go(rw, '#/fleet?label=edge-cluster', 'a.chip.on');
    check((await texts(rw, 'a.chip.on')).includes('edge-cluster'), 'fleet filters by label');
    await rw.click('button.check[data-provider=edge]');
    await rw.waitForFunction(() => document.querySelectorAll('td.reachable .st-reachable').length === 3, { timeout: 30000, polling: 100 });
    check(true, 'fleet: check reachability shows edge1..3 reachable (emco cluster check)');
    await shot(rw, 'fleet');
    // The workspace keeps each cluster's last check: a fresh load shows it.
    await rw.reload();
    await go(rw, '#/fleet', 'table.clusters tr td');
    check((await rw.$$('td.reachable .st-reachable')).length === 3 && (await texts(rw, 'td.lastcheck')).every((t) => /^\d{4}-\d\d-\d\dT/.test(t)),
      'fleet: the last check (reachable, its time) is shown after a reload: ' + (await texts(rw, 'td.lastcheck')).join(','));
    await go(rw, '#/fleet?label=none', 'h2');
    check((await rw.$$('table.clusters')).length === 0, 'a label no cluster has shows no cluster');

    // Logical clouds.
    await go(rw, '#/clouds', '#clouds td');
    const cloud = await texts(rw, '#clouds tr:nth-child(2) td');
    check(cloud[1] === 'admin' && cloud[6].includes('edge+edge1'), 'logical clouds: admin with its clusters (' + cloud.join('|') + ')');
    await shot(rw, 'logical-clouds');

    // Projects: the DIG, not yet approved.
    await go(rw, '#/projects', 'tr.dig');
    check((await texts(rw, 'tr.dig td'))[2] === 'hello-dig', 'projects list hello-dig');
    await shot(rw, 'projects');

    // Read-only server: no action buttons, and the API refuses the browser's POST.
    const ro = await open(browser, RO + '/#/dig/' + DIG);
    await ro.waitForSelector('#actions');
    check((await ro.$$('#actions button')).length === 0, 'read-only: no action buttons');
    check(await fetchStatus(ro, '/v2/' + DIG + '/approve', { method: 'POST' }) === 403, 'read-only: a POST from the browser is refused 403');
    check(await fetchStatus(ro, '/v2/' + DIG + '/approve', { method: 'POST', headers: { 'X-EMCO-Client': 'dashboard' } }) === 403,
      'read-only: the dashboard\'s POST is refused 403');
    await shot(ro, 'dig-read-only');
    check(JSON.parse(emco('dig', 'status', 'quickstart/hello-app/v1/hello-dig', '-o', 'json')).states.actions.length === 1,
      'read-only: the DIG was not approved');

    // Actions with confirmation: approve, then instantiate with slow clusters.
    async function act(op) {
      await go(rw, '#/dig/' + DIG + '?t=' + Date.now(), `#actions button[data-op=${op}]`);
      await rw.click(`#actions button[data-op=${op}]`);
      await rw.waitForSelector('#confirm[open]');
      if (op === 'instantiate') await shot(rw, 'confirm');
      await rw.click('#confirm-ok');
      await rw.waitForSelector('#notice, #error', { timeout: 20000 });
      const notice = await texts(rw, '#notice, #error');
      check(notice[0] === op + ': accepted', op + ' from the dashboard is accepted (' + notice[0] + ')');
    }
    await act('approve');
    // The plan of the pending instantiate, as `emco dig plan` prints it.
    await go(rw, '#/dig/' + DIG + '?plan=1', '#plan');
    // (exit status 2: changes to make)
    const cliPlan = JSON.parse(spawnSync(EMCO, ['dig', 'plan', 'quickstart/hello-app/v1/hello-dig', '-o', 'json'], { encoding: 'utf8' }).stdout);
    check((await texts(rw, '#plan p b'))[0] === `${cliPlan.summary.create} to create, 0 to change, 0 to delete`,
      'the plan shows what emco dig plan prints: ' + (await texts(rw, '#plan p b'))[0]);
    await shot(rw, 'dig-plan');
    emco('sim', 'fault', '*', '--latency-ms', '300', '--dir', env('SIM'));
    await act('instantiate');
    // The page polls the status anchor while the operation runs; what it
    // shows is read here every 100 ms until the last resource is applied.
    const seen = [];
    for (let i = 0; i < 1200; i++) {
      const pct = await rw.$eval('#progress .op-progress', (e) => Number(e.dataset.pct)).catch(() => null);
      if (pct !== null && seen[seen.length - 1] !== pct) {
        seen.push(pct);
        if (pct > 0 && pct < 100) await shot(rw, 'dig-progress');
      }
      if (pct === 100) break;
      await sleep(100);
    }
    emco('sim', 'fault', '*', '--clear', '--dir', env('SIM'));
    check(seen.length >= 2 && seen[seen.length - 1] > seen[0], 'progress moves during the instantiate: ' + seen.join(' → ') + '%');
    await rw.waitForFunction(() => (document.querySelector('#deployed-status') || {}).textContent === 'Instantiated', { timeout: 60000, polling: 100 });
    check(true, 'the DIG page shows Instantiated');

    // The matrix: aggregated by provider and by label, drilled down to the
    // clusters, the same statuses as `emco dig status`.
    await go(rw, '#/dig/' + DIG + '?by=provider&status=deployed', '#matrix td.cell');
    check((await texts(rw, '#matrix td.cell .counts')).join() === '3 Applied', 'matrix by provider: 3 Applied');
    await shot(rw, 'dig');
    await go(rw, '#/dig/' + DIG + '?by=label&status=deployed', '#matrix[data-by=label] td.cell');
    check((await texts(rw, '#matrix th a')).join() === 'edge-cluster', 'matrix by label: edge-cluster');
    await rw.click('#matrix td.cell');
    await rw.waitForSelector('#matrix td.cell[data-cluster]');
    const cells = async () => Object.fromEntries(await rw.$$eval('#matrix td.cell[data-cluster]', (els) => els.map((e) => [e.dataset.cluster, e.dataset.status])));
    const deployed = await cells();
    check(JSON.stringify(deployed) === JSON.stringify(cliCells('deployed')), 'drill-down matches emco dig status (deployed): ' + JSON.stringify(deployed));
    await shot(rw, 'dig-drill-down');
    for (let i = 0; i < 100; i++) {
      await go(rw, '#/dig/' + DIG + '?by=label&group=edge-cluster&status=ready&t=' + i, '#matrix[data-status=ready] td.cell[data-cluster]');
      if (Object.values(await cells()).every((s) => s === 'Ready')) break;
      await sleep(300);
    }
    const ready = await cells();
    check(JSON.stringify(ready) === JSON.stringify(cliCells('ready')), 'drill-down matches emco dig status (ready): ' + JSON.stringify(ready));
    await rw.click('#matrix td.cell[data-cluster="edge+edge2"]');
    await rw.waitForSelector('#detail table td');
    const kinds = await texts(rw, '#detail tr td:first-child');
    check(kinds.includes('Deployment') && kinds.includes('Service'), 'resource detail of hello on edge2: ' + kinds.join(','));
    check((await rw.$$('#detail details')).length > 0, 'resource detail shows the live objects');
    await shot(rw, 'dig-detail');
    const history = await texts(rw, '#history td:nth-child(2)');
    check(history.join() === 'Created,Approved,Instantiated', 'state history: ' + history.join());
    await go(rw, '#/projects', 'tr.dig');
    const row = await texts(rw, 'tr.dig td');
    check(row[3] === 'Instantiated' && row[5] === '1', 'projects: Instantiated, revision 1 (' + row.join('|') + ')');

    // Terminate from the dashboard.
    await act('terminate');
    await rw.waitForFunction(() => (document.querySelector('#deployed-status') || {}).textContent === 'Terminated', { timeout: 60000, polling: 100 });
    check(true, 'terminate from the dashboard ends Terminated');
    await shot(rw, 'dig-terminated');

    // Beyond loopback: the page loads, the data needs the token.
    const remote = await open(browser, REMOTE + '/#/projects');
    await remote.waitForSelector('#token');
    check(await fetchStatus(remote, '/dashboard/overview') === 401, 'remote: the overview without the token is refused 401');
    check(await fetchStatus(remote, '/v2/projects') === 401, 'remote: the API without the token is refused 401');
    await shot(remote, 'token');
    await remote.type('#token', env('TOKEN'));
    await remote.click('form button');
    await remote.waitForSelector('tr.dig');
    check(true, 'remote: with the token the projects render');
  } finally {
    await browser.close();
  }
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  process.exit(failures ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
