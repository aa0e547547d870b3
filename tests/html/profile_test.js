// The heap profile's HTML page in headless Chromium: records heap_pattern (tests/cli/programs:
// a peak of 4 x 262,144 bytes in build_peak, 1,000 temporary allocations of 100 bytes in
// make_temporary, 10 blocks of 1,000 bytes never freed from grow_cache), writes its page with
// memtrack report --html and checks the exact numbers and sites of every view, that the chart
// and the flame graphs are drawn, that a window chosen on the chart is shown, that the page
// made no request and logged no error. Screenshots go to --out. Exits 1 on the first failure.
//
// node profile_test.js --memtrack M --pattern P --chromium C --modules web/node_modules
//                      --out DIR [--docs-screenshot PNG]
'use strict';
const {spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const name of ['memtrack', 'pattern', 'chromium', 'modules', 'out']) {
  if (!args[name]) {
    console.error(`profile_test: missing --${name}`);
    process.exit(2);
  }
  if (name !== 'chromium') args[name] = path.resolve(args[name]);
}
const puppeteer = require(path.join(args.modules, 'puppeteer-core'));
const {openPage} = require('./open_page.js');
const SOURCE = path.resolve(__dirname, '..', 'cli', 'programs', 'heap_pattern.c');

const deadline = setTimeout(() => {
  console.error('FAIL: the profile page test took longer than 150 s');
  process.exit(1);
}, 150000);

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
function lineOf(text) {
  const index = fs.readFileSync(SOURCE, 'utf8').split('\n').findIndex((l) => l.includes(text));
  if (index < 0) fail(`${text} not found in ${SOURCE}`);
  return index + 1;
}
function memtrack(...argv) {
  const run = spawnSync(args.memtrack, argv, {encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20});
  if (run.error) fail(`memtrack ${argv.join(' ')}: ${run.error}`);
  if (run.status !== 0) fail(`memtrack ${argv.join(' ')}: exit ${run.status}: ${run.stderr}`);
  return run;
}

// The rows of a sites table: rank, the numbers' exact values, function and location.
const siteRows = (page, selector) => page.$$eval(selector + ' table.sites tbody tr.site', (rows) => rows.map((r) => ({
  values: Array.from(r.querySelectorAll('td[data-value]')).map((td) => Number(td.dataset.value)),
  fn: r.querySelector('td.fn').textContent, loc: r.querySelector('td.loc').textContent,
})));
const first = (rows) => rows[0] || {};
const frameNames = (page) => page.$$eval('.profile-flame .flame-graph svg g title', (ts) => ts.map((t) => t.textContent));
const rectWidth = (page, name) => page.$$eval('.profile-flame .flame-graph svg g', (groups, n) => {
  const g = groups.find((x) => x.querySelector('title') && x.querySelector('title').textContent.startsWith(n));
  return g ? Number(g.querySelector('rect').getAttribute('width')) : -1;
}, name);

async function showFlame(page, kind) {
  await page.select('select.flame-kind', kind);
  await page.waitForSelector('.profile-flame .flame[data-drawn=true]', {timeout: 10000});
}

// Pixels of the chart's canvas that are not blank: it was drawn.
const inkedPixels = (page) => page.$eval('.heap-chart canvas', (canvas) => {
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] > 0) inked++;
  return inked;
});

async function main() {
  fs.mkdirSync(args.out, {recursive: true});
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrack-profile-page-'));
  const profile = path.join(tmp, 'hp.prof');
  memtrack('run', `--profile=${profile}`, args.pattern);
  const html = path.join(tmp, 'hp.html');
  const json = path.join(tmp, 'hp.json');
  memtrack('report', profile, `--html=${html}`, `--json=${json}`);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  const stdoutPage = memtrack('report', profile, '--format=html').stdout;
  expect(stdoutPage === fs.readFileSync(html, 'utf8'), '--format=html writes what --html wrote');
  const size = fs.statSync(html).size;
  console.log(`MEASURE profile page: ${size} bytes`);

  const browser = await puppeteer.launch({executablePath: args.chromium, headless: true,
                                          args: ['--no-sandbox', '--disable-gpu']});
  try {
    const {page, problems} = await openPage(browser, html);
    const model = await page.evaluate(() => window.memtrack.model);
    expect(JSON.stringify(model.profile) === JSON.stringify(report), 'the page carries the JSON report as it is');
    const summary = await page.$$eval('table.profile-summary tr', (rows) =>
      Object.fromEntries(rows.map((r) => [r.dataset.key, r.querySelector('td').textContent])));
    expectEq(summary['Allocations'], '1,016, 1,006 frees (1 by realloc)', 'summary: allocations');
    expect(summary['Bytes allocated'].endsWith('(1,158,624 bytes)'), 'summary: bytes allocated ' + summary['Bytes allocated']);
    expect(summary['Peak'].includes('(1,053,608 bytes) in 10 blocks at '), 'summary: the peak ' + summary['Peak']);
    expectEq(summary['Temporary allocations'], '1,000 (98.4% of all allocations)', 'summary: temporary allocations');
    expect(summary['Not freed at the end'].endsWith('(10,000 bytes) in 10 blocks'), 'summary: not freed ' + summary['Not freed at the end']);

    const peakLine = lineOf('blocks[i] = malloc(262144);');
    const peak = await siteRows(page, '#peak');
    expectEq([first(peak).fn, first(peak).loc.endsWith(`heap_pattern.c:${peakLine}`), first(peak).values],
             ['build_peak', true, [1048576, 4]], 'peak: build_peak held 1,048,576 bytes in 4 blocks');
    const peakText = await page.$eval('.peak-totals', (p) => p.textContent);
    expect(peakText.startsWith('1,053,608 bytes in 10 blocks were live at '), 'peak: ' + peakText);
    const allocated = await siteRows(page, '.list-allocated');
    expectEq([first(allocated).fn, first(allocated).values], ['build_peak', [1048576, 4]], 'top by bytes allocated');
    const allocations = await siteRows(page, '.list-allocations');
    expectEq([first(allocations).fn, first(allocations).values], ['make_temporary', [1000, 100000]],
             'top by allocations');
    const leaked = await siteRows(page, '.list-leaked');
    // grow_cache is called from two loops: two stacks of 5 blocks each.
    expectEq(leaked.map((r) => [r.fn, r.values]), [['grow_cache', [5000, 5]], ['grow_cache', [5000, 5]]],
             'top by bytes not freed');
    expect(first(leaked).loc.endsWith(`heap_pattern.c:${lineOf('g_sink = malloc(1000);')}`), 'leaked: grow_cache\'s line');
    const temporary = await siteRows(page, '.list-temporary');
    expectEq(temporary.map((r) => [r.fn, r.values]), [['make_temporary', [1000, 100000]]], 'temporary allocations');
    expect(first(temporary).loc.endsWith(`heap_pattern.c:${lineOf('void* p = malloc(size);')}`), 'temporary: make_temporary\'s line');
    // A row opens its stack, main at its end.
    await page.click('.list-leaked tr.site');
    const stack = await page.$$eval('.list-leaked tr.detail li.frame .fn', (fns) => fns.map((f) => f.textContent));
    expectEq([stack[0], stack[stack.length - 1]], ['grow_cache', 'main'], 'leaked: the stack of grow_cache');

    // The chart: more points than the JSON's series, drawn, the peak inside it.
    const points = await page.evaluate(() => window.memtrack.views.chart.data[0].length);
    expect(points > report.series.points.length && points <= 1000,
           `chart: ${points} points (the JSON has ${report.series.points.length}, the page at most 1,000)`);
    const highest = await page.evaluate(() => Math.max(...window.memtrack.views.chart.data[1]));
    expectEq(highest, 1053608, 'chart: its highest live bytes are the peak');
    expect(await inkedPixels(page) > 1000, 'chart: the canvas is drawn');

    // Flame graphs of each quantity, with the pattern's frames.
    const total = await rectWidth(page, path.basename(args.pattern) + ' [');
    let names = await frameNames(page);
    expect(names.some((n) => n.startsWith('main')) && names.some((n) => n.startsWith('build_peak')),
           'flame graph of bytes allocated: main and build_peak');
    const share = (await rectWidth(page, 'build_peak')) / total;
    expect(Math.abs(share - 1048576 / 1158624) < 0.01, `flame graph: build_peak is ${(100 * share).toFixed(1)}% wide`);
    await showFlame(page, 'peak_bytes');
    names = await frameNames(page);
    expect(names.some((n) => n.startsWith('build_peak')) && !names.some((n) => n.startsWith('make_temporary')),
           'flame graph of the peak: build_peak, no make_temporary');
    await showFlame(page, 'leaked_bytes');
    names = await frameNames(page);
    expect(names.some((n) => n.startsWith('grow_cache')) && !names.some((n) => n.startsWith('build_peak')),
           'flame graph of bytes not freed: grow_cache only');
    await showFlame(page, 'allocations');
    expect((await frameNames(page)).some((n) => n.startsWith('make_temporary') && n.includes(': 1,000 allocations (')),
           'flame graph of allocations: make_temporary with 1,000');
    await page.screenshot({path: path.join(args.out, 'profile.png'), fullPage: true});
    await (await page.$('#flame')).screenshot({path: path.join(args.out, 'profile-flame.png')});

    // A window dragged on the chart: the chart's figures and the command that lists its sites.
    expectEq(await page.$eval('.no-window', (p) => p.textContent.startsWith('No window was given')), true,
             'window: none given');
    const over = await page.$('.heap-chart .u-over');
    await over.evaluate((e) => e.scrollIntoView({block: 'center'}));
    const box = await over.boundingBox();
    await page.mouse.move(box.x + box.width * 0.1, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2, {steps: 5});
    await page.mouse.up();
    await page.waitForSelector('.chosen-window', {timeout: 5000});
    const chosen = await page.evaluate(() => window.memtrack.views.chosen);
    expect(chosen.from_us > 0 && chosen.to_us > chosen.from_us && chosen.allocated_bytes > 0,
           `window dragged: ${chosen.from_us} to ${chosen.to_us} µs, ${chosen.allocated_bytes} bytes allocated`);
    const command = await page.$eval('.window-command', (c) => c.textContent);
    expect(/^memtrack report PROFILE --from=\d+ms --to=\d+ms --html=FILE$/.test(command), 'window: the command ' + command);
    // The whole recording chosen: everything allocated, the peak as its highest point.
    const whole = await page.evaluate((end) => window.memtrack.views.selectWindow(0, end), report.duration_us + 1);
    expectEq([whole.allocated_bytes, whole.allocations, whole.heap_max_bytes, whole.heap_end_bytes],
             [1158624, 1016, 1053608, 10000], 'window over the whole recording, from the chart');
    expectEq(problems, [], 'no network request, console error or page error');
    await page.close();

    // The window given with --from: the sites that kept its bytes.
    const fromMs = Math.floor(report.peak.time_us / 1000);
    const windowed = path.join(tmp, 'window.html');
    memtrack('report', profile, `--from=${fromMs}ms`, `--html=${windowed}`);
    const w = await openPage(browser, windowed, args['docs-screenshot'] ? 'light' : 'dark');
    const totals = await w.page.$eval('.window-report .totals', (p) => p.textContent);
    expect(totals.includes('(5,000 bytes) in 5 blocks allocated in the window and not freed in it'), 'window: ' + totals);
    const kept = await siteRows(w.page, '.window-report');
    expectEq(kept.map((r) => [r.fn, r.values]), [['grow_cache', [5000, 5]]], 'window: grow_cache kept 5 blocks');
    await showFlame(w.page, 'window_bytes');
    expect((await frameNames(w.page)).some((n) => n.startsWith('grow_cache')), 'flame graph of the window: grow_cache');
    if (args['docs-screenshot']) {
      await showFlame(w.page, 'allocated_bytes');
      await w.page.screenshot({path: args['docs-screenshot'], clip: {x: 0, y: 0, width: 1280, height: 1500}});
      console.log('wrote ' + args['docs-screenshot']);
    }
    expectEq(w.problems, [], 'window page: no network request, console error or page error');
  } finally {
    await browser.close();
    fs.rmSync(tmp, {recursive: true, force: true});
  }
}

main().then(() => {
  clearTimeout(deadline);
  console.log('PASS');
}, (error) => {
  console.error('FAIL: ' + error.message);
  process.exit(1);
});
