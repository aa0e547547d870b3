// The HTML report in headless Chromium: runs memtrack on the demo programs and on many_leaks
// (500 groups, a growing site under --expire), opens each report and checks its views (table,
// sorting, filtering, an expanded stack with source lines, flame graph zoom and search, errors,
// descriptors, live charts) and the retained-size tree of --show-retainers, that no request
// leaves the page and nothing is logged as an error; then opens the synthetic 10,000-group report and prints how long it took to become
// interactive and its size. Screenshots go to --out. Exits 1 on the first failed check.
//
// node browser_test.js --memtrack M --leaky L --crash C --many P --retainers R --synthetic S --chromium C
//                      --modules web/node_modules --out DIR [--readme-screenshot PNG]
'use strict';
const {execFileSync, spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const name of ['memtrack', 'leaky', 'crash', 'many', 'retainers', 'synthetic', 'chromium', 'modules', 'out']) {
  if (!args[name]) {
    console.error(`browser_test: missing --${name}`);
    process.exit(2);
  }
}
for (const name of ['memtrack', 'leaky', 'crash', 'many', 'retainers', 'synthetic', 'modules', 'out']) args[name] = path.resolve(args[name]);
const puppeteer = require(path.join(args.modules, 'puppeteer-core'));
const {openPage} = require('./open_page.js');
const SOURCE_DIR = path.resolve(__dirname, '..', '..');

// Bounded in time whatever happens inside the browser.
const deadline = setTimeout(() => {
  console.error('FAIL: the browser test took longer than 180 s');
  process.exit(1);
}, 180000);

function fail(message) {
  throw new Error(message);
}
function expectEq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`);
  console.log(`ok   ${what}: ${a}`);
}
function expect(condition, what) {
  if (!condition) fail(what);
  console.log(`ok   ${what}`);
}
// The line of `text` in a source file (1-based), to check file:line without hard-coding it.
function lineOf(file, text) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const index = lines.findIndex((l) => l.includes(text));
  if (index < 0) fail(`${text} not found in ${file}`);
  return index + 1;
}

function memtrack(...argv) {
  const run = spawnSync(args.memtrack, argv, {encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20});
  if (run.error) fail(`memtrack ${argv.join(' ')}: ${run.error}`);
  return run;
}

function checkClean(report, what) {
  expectEq(report.problems, [], `${what}: no network request, console error or page error`);
}

const tableRows = (page) => page.$$eval('table.leaks tbody tr.expandable', (rows) => rows.map((r) => ({
  kind: r.children[1].textContent, bytes: r.children[2].getAttribute('title'),
  blocks: r.children[3].textContent, fn: r.children[4].textContent, loc: r.children[5].textContent,
})));

const byteCount = (title) => Number(title.replace(/[^0-9]/g, ''));

async function setFilter(page, text) {
  // Cleared as a user clears it (an input event), then typed key by key.
  await page.$eval('.leak-table input.filter', (input) => {
    input.value = '';
    input.dispatchEvent(new Event('input'));
  });
  if (text) await page.type('.leak-table input.filter', text);
  await page.waitForFunction((t) => document.querySelector('.leak-table').dataset.filter === t,
                             {timeout: 5000}, text);
}

// The width of the flame graph rect labelled `name` (its first one).
const rectWidth = (page, name) => page.$$eval('.flame-graph svg g', (groups, n) => {
  const g = groups.find((x) => x.querySelector('title') && x.querySelector('title').textContent.startsWith(n));
  return g ? Number(g.querySelector('rect').getAttribute('width')) : -1;
}, name);

async function clickFrame(page, name) {
  const handle = await page.evaluateHandle((n) => Array.from(document.querySelectorAll('.flame-graph svg g'))
    .find((g) => g.querySelector('title') && g.querySelector('title').textContent.startsWith(n)), name);
  const element = handle.asElement();
  if (!element) fail(`no flame graph frame ${name}`);
  await element.click();
  await new Promise((resolve) => setTimeout(resolve, 600));  // the zoom's transition
}

async function demoReport(browser, out) {
  const html = path.join(out, 'demo.html');
  const json = path.join(out, 'demo.json');
  const run = memtrack('run', '--html=' + html, '--json=' + json, '--', args.leaky);
  expect(fs.existsSync(html), `memtrack run --html wrote ${html} (exit ${run.status})`);
  const model = JSON.parse(fs.readFileSync(json, 'utf8')).processes[0];
  const report = await openPage(browser, html);
  const {page} = report;
  const source = path.join(SOURCE_DIR, 'examples', 'leaky.c');

  let rows = await tableRows(page);
  expectEq(rows.length, model.leaks.length, 'demo: one row per leak group of the JSON report');
  expectEq(rows.map((r) => byteCount(r.bytes)), model.leaks.map((g) => g.bytes), 'demo: bytes by row, largest first');
  const config = rows.find((r) => r.fn === 'read_config');
  expect(config, 'demo: a row for read_config');
  expectEq(config.loc, `${source}:${lineOf(source, 'buf = realloc(buf, size)')}`, 'demo: read_config file:line');
  expectEq(byteCount(config.bytes), 4096, 'demo: read_config bytes');

  await page.click('th[data-sort=blocks]');
  rows = await tableRows(page);
  expectEq(rows[0].fn, 'open_session', 'demo: sorted by blocks, the 3-block group first');
  expectEq(rows[0].blocks, '3', 'demo: its blocks');
  await page.click('th[data-sort=blocks]');
  rows = await tableRows(page);
  expectEq(rows[rows.length - 1].fn, 'open_session', 'demo: blocks ascending, the 3-block group last');
  await page.click('th[data-sort=bytes]');

  await setFilter(page, 'accept_clients');
  rows = await tableRows(page);
  expectEq(rows.map((r) => r.fn), ['open_session'], 'demo: filter by a caller\'s name keeps its group only');
  await setFilter(page, 'leaky.c');
  rows = await tableRows(page);
  expectEq(rows.length, model.leaks.length, 'demo: filter by file name keeps every group from leaky.c');
  await setFilter(page, 'no such function');
  expectEq((await tableRows(page)).length, 0, 'demo: filter matching nothing');
  await setFilter(page, '');

  const row = await page.evaluateHandle(() => Array.from(document.querySelectorAll('table.leaks tr.expandable'))
    .find((r) => r.children[4].textContent === 'read_config'));
  await row.asElement().click();
  const detail = await page.$eval('table.leaks tr.detail', (tr) => ({
    frames: Array.from(tr.querySelectorAll('li.frame .fn')).map((f) => f.textContent),
    here: Array.from(tr.querySelectorAll('.src-line.here .src-text')).map((l) => l.textContent),
  }));
  expectEq(detail.frames, ['read_config', 'main'], 'demo: the expanded stack, down to main');
  expect(detail.here[0].includes('buf = realloc(buf, size)'), 'demo: the source line of read_config is shown');
  await page.screenshot({path: path.join(out, 'demo-report.png'), fullPage: true});
  if (args['readme-screenshot']) {
    await page.waitForSelector('.flame[data-drawn=true]');
    await page.screenshot({path: args['readme-screenshot'], fullPage: true});
  }

  const full = await page.$eval('.flame-graph svg', (svg) => Number(svg.getAttribute('width')));
  const before = await rectWidth(page, 'accept_clients');
  expect(before > 0 && before < full, `demo: accept_clients is part of the flame graph (${before} of ${full} px)`);
  await clickFrame(page, 'accept_clients');
  const after = await rectWidth(page, 'accept_clients');
  expect(Math.abs(after - full) < 1, `demo: clicking accept_clients zooms it to the full width (${after} px)`);
  await page.click('.flame button');
  await new Promise((resolve) => setTimeout(resolve, 600));
  expect(Math.abs(await rectWidth(page, 'accept_clients') - before) < 1, 'demo: reset zoom');
  await page.type('.flame input.filter', 'worker');
  await page.waitForFunction(() => document.querySelector('.flame-details').textContent.includes('match'), {timeout: 5000});
  const worker = model.leaks.find((g) => g.stack[0].function === 'worker').bytes;
  const share = (100 * worker / model.summary.leaked_bytes).toFixed(1);
  expectEq(await page.$eval('.flame-details', (d) => d.textContent),
           `1 frames match, ${worker} B (${share}% of the leaked bytes)`, 'demo: flame graph search');
  await (await page.$('#flame')).screenshot({path: path.join(out, 'demo-flame.png')});
  checkClean(report, 'demo');
  await page.close();

  const dark = await openPage(browser, html, 'dark');
  const background = await dark.page.$eval('body', (b) => getComputedStyle(b).backgroundColor);
  expectEq(background, 'rgb(20, 23, 28)', 'demo: dark mode background');
  await dark.page.screenshot({path: path.join(out, 'demo-report-dark.png'), fullPage: true});
  checkClean(dark, 'demo, dark');
  await dark.page.close();
}

async function crashReport(browser, out) {
  const html = path.join(out, 'crash.html');
  const run = memtrack('run', '--html=' + html, '--', args.crash);
  expect(fs.existsSync(html), `memtrack run --html on a crashing program wrote ${html} (exit ${run.status})`);
  const report = await openPage(browser, html);
  const crash = await report.page.$eval('#crash', (section) => ({
    title: section.querySelector('h2').textContent,
    frames: Array.from(section.querySelectorAll('li.frame .fn')).map((f) => f.textContent),
  }));
  expect(crash.title.startsWith('Crashed: SIGSEGV'), `crash: the signal is named (${crash.title})`);
  expectEq(crash.frames, ['set_value', 'main'], 'crash: the crashing thread\'s stack, down to main');
  checkClean(report, 'crash');
  await report.page.close();
}

async function manyReport(browser, out) {
  const html = path.join(out, 'many.html');
  const json = path.join(out, 'many.json');
  const run = memtrack('run', '--expire=400ms', '--report-interval=400ms', '--html=' + html, '--json=' + json,
                       '--log-file=' + path.join(out, 'many.log'), '--', args.many, '3');
  expect(fs.existsSync(html), `memtrack run --expire --html wrote ${html} (exit ${run.status})`);
  const model = JSON.parse(fs.readFileSync(json, 'utf8')).processes[0];
  const report = await openPage(browser, html);
  const {page} = report;
  const source = path.join(SOURCE_DIR, 'tests', 'html', 'many_leaks.cpp');

  const sites = model.leaks.filter((g) => g.stack.length && g.stack[0].function.startsWith('Site<'));
  expectEq(sites.length, 500, 'many: 500 Site<N> groups in the JSON report');
  expectEq(await page.$eval('.leak-table .count', (c) => c.textContent), `${model.leaks.length} groups`, 'many: group count');
  let rows = await tableRows(page);
  expectEq(rows.length, 200, 'many: the first 200 rows are drawn');
  await page.click('.leak-table button.more');
  expectEq((await tableRows(page)).length, 400, 'many: "show more" draws 200 more');

  await setFilter(page, 'Site<42>::');
  rows = await tableRows(page);
  expectEq(rows.map((r) => r.fn), ['Site<42>::leak(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)'],
           'many: filter on a name with < > & finds its one group, shown as text');
  expectEq([byteCount(rows[0].bytes), rows[0].blocks], [(16 + 8 * 42) * 1, '1'], 'many: Site<42> bytes and blocks');
  expectEq(rows[0].loc, `${source}:${lineOf(source, 'char* block = new char[16 + 8 * N]')}`, 'many: Site<42> file:line');
  await setFilter(page, '');

  await page.click('th[data-sort=kind]');
  rows = await tableRows(page);
  const largest = model.leaks.filter((g) => g.kind === 'definite').sort((a, b) => b.bytes - a.bytes)[0];
  expectEq(largest.stack[0].function, 'Site<497>::leak(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)',
           'many: the largest definite group is Site<497> (3 blocks of 3992 bytes)');
  expectEq([rows[0].kind, rows[0].fn, byteCount(rows[0].bytes)], ['definite', largest.stack[0].function, 3 * 3992],
           'many: by kind, definite first, largest first within it');
  const kinds = model.leaks.map((g) => g.kind);
  expect(kinds.includes('indirect'), 'many: the JSON report has indirect groups');
  await page.click('th[data-sort=kind]');
  rows = await tableRows(page);
  expectEq(rows[0].kind, 'indirect', 'many: kind ascending puts the last kind first');

  const errors = await page.$$eval('#errors details.error summary', (s) => s.map((x) => x.textContent));
  expectEq(errors.length, model.errors.length, 'many: one entry per allocator misuse error');
  expect(errors[0].startsWith('mismatched free'), `many: the mismatched delete is shown (${errors[0]})`);
  const fds = await page.$$eval('table.resources tbody tr', (r) => r.map((x) => x.children[2].textContent));
  expectEq(fds, ['/dev/null'], 'many: the descriptor left open');

  const live = await page.evaluate(() => ({
    charts: document.querySelectorAll('#live canvas').length,
    growing: Array.from(document.querySelectorAll('.live-site.growing .fn')).map((f) => f.textContent),
  }));
  expect(live.growing.includes('grow_site()'), `many: grow_site is a GROWING site (${JSON.stringify(live.growing)})`);
  expect(live.charts >= 2, `many: live charts drawn (${live.charts} canvases)`);
  const points = await page.evaluate(() => window.memtrack.views.live.data.sites.find((s) => s.stack[0].function === 'grow_site()').bytes);
  expect(points.length >= 4 && points[points.length - 1] > points[0],
         `many: grow_site's old bytes rise over the reports (${JSON.stringify(points)})`);
  await page.screenshot({path: path.join(out, 'many-report.png'), fullPage: true});
  await (await page.$('#live')).screenshot({path: path.join(out, 'many-live.png')});
  checkClean(report, 'many');
  await page.close();
}

async function syntheticTiming(browser, out) {
  const html = path.join(out, 'synthetic.html');
  execFileSync(args.synthetic, [html, '10000', '10'], {timeout: 120000});
  const size = fs.statSync(html).size;
  const report = await openPage(browser, html);
  const {page} = report;
  const ready = await page.evaluate(() => window.memtrack.readyMs);
  const timing = await page.evaluate(() => window.memtrack.timing);
  const frames = await page.evaluate(() => new Set(window.memtrack.model.report.processes[0].leaks
    .flatMap((g) => g.stack.map((f) => f.address))).size);
  const flameMs = await page.evaluate(() => window.memtrack.views.flame.drawnMs);
  const sortMs = await page.evaluate(() => {
    const start = performance.now();
    document.querySelector('th[data-sort=blocks]').click();
    return performance.now() - start;
  });
  expectEq(await page.$eval('.leak-table .count', (c) => c.textContent), '10,000 groups', 'synthetic: group count');
  console.log(`MEASURE html report, 10,000 groups and ${frames} unique frames: ${(size / 1048576).toFixed(1)} MiB ` +
              `(${size} bytes), interactive ${ready.toFixed(0)} ms after navigation start (page loaded and scripts ` +
              `started ${timing.scriptStart.toFixed(0)} ms, JSON parsed ${(timing.parsed - timing.scriptStart).toFixed(0)} ms, ` +
              `views ${(timing.ready - timing.parsed).toFixed(0)} ms), flame graph drawn by ${flameMs.toFixed(0)} ms, ` +
              `a sort takes ${sortMs.toFixed(0)} ms`);
  await page.screenshot({path: path.join(out, 'synthetic-report.png')});
  checkClean(report, 'synthetic');
  await page.close();
}

// memtrack run --show-retainers on the known heap graph of tests/cli/programs/retainers.c:
// the retained-size tree, opened from the root down, as the JSON report has it.
const treeRows = (page) => page.$$eval('table.retention-tree tr.tree-row', (rows) => rows.map((r) => ({
  depth: Number(r.dataset.depth), name: r.children[0].textContent.replace(/^[▸▾]?\s*/, ''),
  retained: r.children[1].textContent, blocks: r.children[2].textContent,
  own: r.children[3].textContent, ownBlocks: r.children[4].textContent,
})));

async function retentionReport(browser, out) {
  const html = path.join(out, 'retainers.html');
  const run = memtrack('run', '--show-retainers', '--html=' + html, '--', args.retainers);
  expect(fs.existsSync(html), `memtrack run --show-retainers --html wrote ${html} (exit ${run.status})`);
  const report = await openPage(browser, html);
  const {page} = report;
  const source = path.join(SOURCE_DIR, 'tests', 'cli', 'programs', 'retainers.c');
  const table = lineOf(source, 'calloc(8, sizeof(struct node*))');
  expect(!(await page.$eval('#nav-retained', (a) => a.hidden)), 'retainers: the Retained link is shown');
  let rows = await treeRows(page);
  expectEq(rows[0], {depth: 0, name: `global g_table (retainers.c:${lineOf(source, 'g_table;')})`, retained: '1.56 KiB', blocks: '33',
                     own: '', ownBlocks: ''}, 'retainers: the root that keeps the most comes first');
  expectEq(rows[1], {depth: 1, name: `build_table (retainers.c:${table})`, retained: '1.56 KiB', blocks: '33',
                     own: '64 B', ownBlocks: '1'}, 'retainers: under it, the table it holds (open)');
  expect(rows.some((r) => r.depth === 0 && r.name === 'several roots, none alone' && r.retained === '48 B'),
         'retainers: the block two globals share is under "several roots"');
  expect(!rows.some((r) => r.depth === 2), 'retainers: the sites below the first are folded at first');

  const toggle = async (name) => {
    const button = await page.evaluateHandle((n) => Array.from(document.querySelectorAll('tr.tree-row'))
      .find((r) => r.children[0].textContent.includes(n)).querySelector('button.tree-toggle'), name);
    await button.asElement().click();
  };
  await toggle('build_table');
  rows = await treeRows(page);
  expectEq(rows[2], {depth: 2, name: 'new_node (retainers.c:' + lineOf(source, 'malloc(sizeof(struct node))') + ')',
                     retained: '1.50 KiB', blocks: '32', own: '1.50 KiB', ownBlocks: '32'},
           'retainers: opened, the table holds the 32 nodes of 8 lists');
  await page.evaluate(() => Array.from(document.querySelectorAll('table.retention-tree tr.tree-row'))
    .find((r) => r.dataset.depth === '2').querySelector('span.fn').click());
  const frames = await page.$eval('table.retention-tree tr.detail', (tr) =>
    Array.from(tr.querySelectorAll('li.frame .fn')).map((f) => f.textContent));
  expectEq(frames.slice(0, 3), ['new_node', 'build_table', 'main'], 'retainers: a site\'s stack opens under it');
  await page.screenshot({path: path.join(out, 'retainers-report.png'), fullPage: true});
  await toggle('build_table');
  rows = await treeRows(page);
  expect(!rows.some((r) => r.depth === 2) && (await page.$$('table.retention-tree tr.detail')).length === 0,
         'retainers: closed again, the nodes and their stack are gone');
  checkClean(report, 'retainers');
  await page.close();
}

async function main() {
  fs.mkdirSync(args.out, {recursive: true});
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrack-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: args.chromium,
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60000,
  });
  try {
    await demoReport(browser, args.out);
    await crashReport(browser, args.out);
    await manyReport(browser, args.out);
    await retentionReport(browser, args.out);
    await syntheticTiming(browser, args.out);
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
  }
  console.log(`screenshots in ${args.out}`);
}

main().then(() => {
  clearTimeout(deadline);
}, (error) => {
  console.error('FAIL: ' + (error && error.message ? error.message : error));
  process.exit(1);
});
