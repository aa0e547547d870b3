// memtrack ui in headless Chromium: starts `memtrack ui` and two test processes (cli_sleeper,
// and cli_daemon under `memtrack run`), opens the printed URL and checks that the process
// table shows the sleeper with the kernel's RSS, sorts by a clicked column, refreshes, marks
// the daemon as running under memtrack, and that "Snapshot now" shows the daemon's definite
// leak at daemon.c's @lost line in the report views; that a heap profile named on the command
// line (heap_pattern's) opens in the profile views, and a window chosen on its chart is
// analysed by the server; that the heap profile of a program still running under memtrack run
// --profile opens from its row; no console error, no request to another origin. Screenshots go to
// --out. Exits 1 on the first failed check.
//
// node browser_test.js --memtrack M --daemon D --sleeper S --pattern P --chromium C
//                      --modules web/node_modules --out DIR [--readme-screenshot PNG]
'use strict';
const {spawn, spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const name of ['memtrack', 'daemon', 'sleeper', 'pattern', 'chromium', 'modules', 'out']) {
  if (!args[name]) {
    console.error(`browser_test: missing --${name}`);
    process.exit(2);
  }
  if (name !== 'chromium') args[name] = path.resolve(args[name]);
}
const puppeteer = require(path.join(args.modules, 'puppeteer-core'));
const {openServedPage} = require('../html/open_page.js');
const SOURCE_DIR = path.resolve(__dirname, '..', '..');

// The sleeper's RSS in the table must match /proc/PID/status VmRSS within this: the sleeper
// does nothing, so its RSS only moves by a page or two (libc's lazy mappings); the table is at
// most one refresh (1 s) older than the kernel's value read next to it.
const RSS_TOLERANCE_KB = 256;

const children = [];
const deadline = setTimeout(() => {
  console.error('FAIL: the ui browser test took longer than 150 s');
  cleanup();
  process.exit(1);
}, 150000);

function cleanup() {
  for (const child of children) {
    try { child.kill('SIGTERM'); } catch (e) { /* already gone */ }
  }
}
// Stops the children and waits (at most 10 s) until they have exited: a `memtrack run` that
// was told to stop still writes its kept result directory, which must not be removed under it.
async function stopChildren() {
  const running = children.filter((child) => child.exitCode === null && child.signalCode === null);
  const exited = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
  cleanup();
  await Promise.race([Promise.all(exited), new Promise((resolve) => setTimeout(resolve, 10000))]);
}
function fail(message) {
  throw new Error(message);
}
function expect(condition, what) {
  if (!condition) fail(what);
  console.log(`ok   ${what}`);
}
function lineOf(file, text) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const index = lines.findIndex((l) => l.includes(text));
  if (index < 0) fail(`${text} not found in ${file}`);
  return index + 1;
}
function vmRssKb(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) fail(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

// Starts argv and resolves with the first stdout line that matches `pattern`.
function startAndWait(argv, pattern, what, options) {
  const child = spawn(argv[0], argv.slice(1), Object.assign({stdio: ['ignore', 'pipe', 'pipe']}, options));
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({input: child.stdout});
    lines.on('line', (line) => {
      const match = pattern.exec(line);
      if (match) resolve({child, match});
    });
    child.on('exit', (code) => reject(new Error(`${what} ended (${code}) before it was ready: ${stderr}`)));
  });
}

async function main() {
  fs.mkdirSync(args.out, {recursive: true});
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrack-ui-test-'));
  const marker = path.join(work, 'sleeping');
  const sleeper = spawn(args.sleeper, [marker], {stdio: 'ignore'});
  children.push(sleeper);
  for (let i = 0; i < 200 && !fs.existsSync(marker); i++) await new Promise((r) => setTimeout(r, 25));
  expect(fs.existsSync(marker), 'the sleeper runs');
  // Live files stay in a kept result directory only: --keep-results makes them reachable.
  const kept = path.join(work, 'kept');
  const daemon = await startAndWait([args.memtrack, 'run', '--expire=1s', '--keep-results=' + kept, args.daemon, '120'], /^ready (\d+)$/, 'memtrack run daemon',
                                    {cwd: work});
  const daemonPid = Number(daemon.match[1]);
  // A JSON report to open from disk: the daemon's, run for no time (its lost block only).
  const report = path.join(work, 'daemon.json');
  const run = spawnSync(args.memtrack, ['run', '--json=' + report, args.daemon, '0'], {encoding: 'utf8', timeout: 60000});
  if (run.status !== 0 || !fs.existsSync(report)) fail(`memtrack run --json failed: ${run.stderr}`);
  // A heap profile to open from disk: heap_pattern's.
  const heapProfile = path.join(work, 'hp.prof');
  const recorded = spawnSync(args.memtrack, ['run', '--profile=' + heapProfile, args.pattern], {encoding: 'utf8', timeout: 60000});
  if (recorded.status !== 0 || !fs.existsSync(heapProfile)) fail(`memtrack run --profile failed: ${recorded.stderr}`);
  // A program still running under memtrack run --profile: heap_pattern holds its blocks
  // until its standard input closes (when the test ends).
  const holding = await startAndWait([args.memtrack, 'run', '--profile=' + path.join(work, 'running.prof'), args.pattern, '--hold'],
                                     /^ready (\d+)$/, 'memtrack run heap_pattern --hold', {cwd: work, stdio: ['pipe', 'pipe', 'pipe']});
  const holdingPid = Number(holding.match[1]);
  const ui = await startAndWait([args.memtrack, 'ui', '--timeout', '30', report, heapProfile], /serving at (http:\S+)/, 'memtrack ui');
  const url = ui.match[1];
  const origin = new URL(url).origin;
  console.log(`memtrack ui at ${origin}; sleeper ${sleeper.pid}, daemon ${daemonPid}`);

  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrack-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: args.chromium,
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--no-proxy-server',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60000,
  });
  try {
    const {page, problems} = await openServedPage(browser, url);

    // The kernel's RSS, read next to the table's.
    const rowOf = (pid) => `tr.process[data-pid="${pid}"]`;
    // The table's rows are drawn anew at every refresh (each second): a row's element is found
    // and clicked in one step in the page, since a refresh between puppeteer's steps of a
    // click detaches it ("Node is detached from document" on a loaded machine).
    const clickInTable = (selector) => page.$eval(selector, (e) => e.click());
    await page.waitForSelector(rowOf(sleeper.pid), {timeout: 10000});
    const kernel = vmRssKb(sleeper.pid);
    const shown = Number(await page.$eval(rowOf(sleeper.pid) + ' td[data-col=rss]', (td) => td.dataset.kb));
    expect(Math.abs(shown - kernel) <= RSS_TOLERANCE_KB,
           `the sleeper's RSS in the table (${shown} KiB) is the kernel's VmRSS (${kernel} KiB) ` +
           `within ${RSS_TOLERANCE_KB} KiB`);

    // Refreshes: the count of answered refreshes goes up by itself.
    const before = await page.evaluate(() => window.memtrackUi.refreshes);
    await page.waitForFunction((n) => window.memtrackUi.refreshes >= n + 2, {timeout: 15000}, before);
    expect(true, 'the table refreshed twice more by itself (every second)');

    expect(await page.$eval(rowOf(sleeper.pid) + ' svg.spark polyline', (l) => l.getAttribute('points').split(' ').length) >= 2,
           "the sleeper's row has its last minute as a sparkline");

    // Sorting: a click on PID sorts by pid ascending, a second click descending, RSS largest first.
    const pids = () => page.$$eval('tr.process', (rows) => rows.map((r) => Number(r.dataset.pid)));
    const sortedAsc = (xs) => xs.every((x, i) => i === 0 || xs[i - 1] <= x);
    await page.click('th[data-col=pid]');
    expect(sortedAsc(await pids()), 'a click on PID sorts by pid, smallest first');
    await page.click('th[data-col=pid]');
    expect(sortedAsc((await pids()).reverse()), 'a second click reverses it');
    await page.click('th[data-col=rss]');
    const rss = await page.$$eval('tr.process td[data-col=rss]', (tds) => tds.map((t) => Number(t.dataset.kb ?? -1)));
    expect(sortedAsc(rss.slice().reverse()), 'a click on RSS sorts largest first');

    // Filter and the memtrack mark.
    // (The filter also leaves out this test's own node process, whose arguments name cli_daemon.)
    await page.type('input[type=search]', 'cli_daemon 120');
    const filtered = await pids();
    expect(filtered.includes(daemonPid) && !filtered.includes(sleeper.pid) && !filtered.includes(process.pid),
           `the filter "cli_daemon 120" keeps the daemon and hides the sleeper (${filtered})`);
    expect(await page.$eval(rowOf(daemonPid), (r) => r.querySelector('.memtrack-mark')?.textContent) === 'memtrack',
           'the daemon is marked as running under memtrack');

    // Threads on demand.
    await clickInTable(rowOf(daemonPid) + ' button.expand');
    await page.waitForSelector(`tr.thread[data-tid="${daemonPid}"]`, {timeout: 10000});
    expect(true, "the daemon's main thread is listed under it after a click on its arrow");

    // The chosen process: its RSS chart and a snapshot with the leak at daemon.c's @lost line.
    await clickInTable(rowOf(daemonPid) + ' td[data-col=user]');
    await page.waitForSelector('.rss-chart .uplot', {timeout: 10000});
    expect(true, "the daemon's RSS chart is drawn");
    // The first live report comes after a second or more: wait for it before the snapshot.
    for (let i = 0; i < 120 && !fs.readdirSync(kept).some((f) => f.startsWith('live.')); i++) {
      await new Promise((r) => setTimeout(r, 250));
    }
    await page.click('#snapshot-now');
    await page.waitForFunction(() => Number(document.body.dataset.report) >= 1, {timeout: 40000});
    const lost = lineOf(path.join(SOURCE_DIR, 'tests/cli/programs/daemon.c'), '@lost');
    const leakText = await page.$eval('.report-panel #leaks', (e) => e.textContent);
    expect(leakText.includes(`daemon.c:${lost}`) && leakText.includes('lose_one'),
           `the snapshot's leak table shows lose_one at daemon.c:${lost}`);
    const definite = await page.evaluate(() => window.memtrackUi.views.processes[0].leaks
      .filter((g) => g.kind === 'definite').map((g) => [g.bytes, g.blocks]));
    expect(JSON.stringify(definite) === '[[48,1]]', `one definite leak of 48 bytes in 1 block (${JSON.stringify(definite)})`);

    const liveCount = await page.evaluate(() => window.memtrackUi.views.live?.data.times.length || 0);
    expect(liveCount >= 1, `the snapshot's page has the live reports so far (${liveCount})`);

    // Tall enough for the table, the chart and the snapshot's leak table.
    await page.setViewport({width: 1280, height: 1500});
    await page.waitForFunction(() => document.querySelector('#flame svg') !== null, {timeout: 20000});
    await page.screenshot({path: path.join(args.out, 'ui.png')});
    if (args['readme-screenshot']) await page.screenshot({path: args['readme-screenshot']});

    // The report named on the command line, in the same views.
    const reportsBefore = await page.evaluate(() => Number(document.body.dataset.report));
    await page.click('button.open-file[data-index="0"]');
    await page.waitForFunction((n) => Number(document.body.dataset.report) > n, {timeout: 20000}, reportsBefore);
    const fileText = await page.$eval('.report-panel #leaks', (e) => e.textContent);
    expect(fileText.includes(`daemon.c:${lost}`) && fileText.includes('48 B'),
           `the opened daemon.json shows its 48-byte leak at daemon.c:${lost}`);

    // The heap profile named on the command line, in the profile views.
    const siteRows = (selector) => page.$$eval(selector + ' table.sites tbody tr.site', (rows) => rows.map((r) =>
      [r.querySelector('td.fn').textContent].concat(Array.from(r.querySelectorAll('td[data-value]')).map((td) => Number(td.dataset.value)))));
    let shownReports = await page.evaluate(() => Number(document.body.dataset.report));
    await page.click('button.open-file[data-index="1"]');
    await page.waitForFunction((n) => Number(document.body.dataset.report) > n, {timeout: 30000}, shownReports);
    await page.waitForSelector('.report-panel .profile-flame .flame[data-drawn=true]', {timeout: 20000});
    const peakRows = await siteRows('.report-panel #peak');
    expect(JSON.stringify(peakRows[0]) === '["build_peak",1048576,4]',
           `the profile's peak: build_peak held 1,048,576 bytes in 4 blocks (${JSON.stringify(peakRows[0])})`);
    expect(await page.$eval('.report-panel .heap-chart canvas', (c) => c.width > 0), "the profile's chart is drawn");
    expect(await page.$$eval('.report-panel .profile-flame svg g title', (ts) => ts.some((t) => t.textContent.startsWith('build_peak'))),
           "the profile's flame graph has build_peak");
    // A window from the peak's step to the end, chosen as the chart does, analysed by the server.
    const model = await page.evaluate(() => window.memtrackUi.views.model);
    const step = model.chart.bucket_us;
    await page.evaluate((from, to) => window.memtrackUi.views.selectWindow(from, to),
                        Math.floor(model.profile.peak.time_us / step) * step, model.profile.duration_us + step);
    shownReports = await page.evaluate(() => Number(document.body.dataset.report));
    await page.click('.report-panel button.analyse-window');
    await page.waitForFunction((n) => Number(document.body.dataset.report) > n, {timeout: 30000}, shownReports);
    const windowSites = await siteRows('.report-panel .window-report');
    expect(JSON.stringify(windowSites) === '[["grow_cache",5000,5]]',
           `the window from the peak to the end kept grow_cache's 5 blocks of 1,000 bytes (${JSON.stringify(windowSites)})`);
    await page.waitForSelector('.report-panel .profile-flame .flame[data-drawn=true]', {timeout: 20000});
    await new Promise((resolve) => setTimeout(resolve, 300));  // the flame graph's first drawing
    await page.screenshot({path: path.join(args.out, 'ui-profile.png'), fullPage: true});

    // The running program's heap profile so far, from its row in the table.
    await page.$eval('input[type=search]', (e) => { e.value = ''; });
    await page.type('input[type=search]', String(holdingPid));
    await page.waitForSelector(rowOf(holdingPid), {timeout: 10000});
    await clickInTable(rowOf(holdingPid) + ' td[data-col=user]');
    await page.waitForSelector('#heap-profile', {timeout: 10000});
    shownReports = await page.evaluate(() => Number(document.body.dataset.report));
    await page.click('#heap-profile');
    await page.waitForFunction((n) => Number(document.body.dataset.report) > n, {timeout: 30000}, shownReports);
    const runningPeak = await siteRows('.report-panel #peak');
    expect(JSON.stringify(runningPeak[0]) === '["build_peak",1048576,4]',
           `the running program's profile: build_peak held 1,048,576 bytes in 4 blocks (${JSON.stringify(runningPeak[0])})`);
    expect((await page.$eval('.report-panel', (e) => e.textContent)).includes('still running'),
           'the running profile says the program is still running');
    await page.screenshot({path: path.join(args.out, 'ui-running-profile.png'), fullPage: true});
    expect(problems.length === 0, `no console error and no request elsewhere (${problems.join('; ')})`);
    await page.close();
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
    await stopChildren();
    fs.rmSync(work, {recursive: true, force: true, maxRetries: 5, retryDelay: 200});
  }
  console.log(`screenshots in ${args.out}`);
}

main().then(() => {
  clearTimeout(deadline);
}, (error) => {
  console.error('FAIL: ' + (error && error.stack ? error.stack : error));
  cleanup();
  process.exit(1);
});
