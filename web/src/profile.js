// The heap profile's views (docs/profiling.md, "In the browser"): summary, heap over time
// (uPlot: live bytes, RSS, allocation rate; drag across it to choose a window), the peak and
// the stacks that held it, the top sites by bytes allocated, by allocations and by bytes not
// freed, temporary allocations, the time window and flame graphs of five quantities. Their
// input is the model of profile/profile_html.h:
//
//   model = {profile: the JSON report of `memtrack report PROFILE --json`, chart: its series
//            at a finer step (columns), frames: [...], stacks: [{frames: [indices], values}],
//            sites_total, version}
//
// V.renderProfile(root, model, options) fills `root`; options.loadWindow(fromUs, toUs), when
// given (memtrack ui), returns a promise of the model analysed for that window.
(function (V) {
  'use strict';
  const el = V.el;

  const seconds = (us) => (us / 1e6).toFixed(3) + ' s';
  const ms = (us) => Math.round(us / 1000) + 'ms';
  // approx: '~' before a figure of the sampled mode, an estimate; else ''.
  const bytesCell = (n, approx) => el('td', {class: 'num', title: approx + V.formatCount(n) + ' bytes', dataset: {value: n}},
                                      approx + V.formatBytes(n));
  const countCell = (n, approx) => el('td', {class: 'num', dataset: {value: n}}, approx + V.formatCount(n));

  // The flame graphs' quantities: the field of a stack in the model, how its values read.
  const FLAME_KINDS = [
    {key: 'allocated_bytes', label: 'Bytes allocated', what: 'the bytes allocated', format: V.formatBytes},
    {key: 'allocations', label: 'Allocations', what: 'the allocations', format: (n) => V.plural(n, 'allocation')},
    {key: 'temporary', label: 'Temporary allocations', what: 'the temporary allocations',
     format: (n) => V.plural(n, 'temporary allocation')},
    {key: 'peak_bytes', label: 'Bytes at the peak', what: 'the bytes live at the peak', format: V.formatBytes},
    {key: 'leaked_bytes', label: 'Bytes not freed', what: 'the bytes not freed at the end', format: V.formatBytes},
    {key: 'window_bytes', label: 'Window growth', what: 'the bytes the window kept', format: V.formatBytes},
  ];
  V.PROFILE_FLAME_KINDS = FLAME_KINDS;

  V.profileLabel = (profile) => V.basename(profile.program) + ' [' + profile.pid + ']';

  // The tree of the model's stacks for one quantity, main at the root's child, frames merged
  // by name as flamegraph.pl merges them (as V.flameTree does for leaks).
  V.profileFlameTree = function (model, key) {
    const root = {name: V.profileLabel(model.profile), value: 0, children: []};
    const index = new Map([[root, new Map()]]);
    for (const s of model.stacks) {
      const value = s[key];
      if (!value) continue;
      root.value += value;
      let node = root;
      for (let i = s.frames.length - 1; i >= 0; i--) {
        const frame = model.frames[s.frames[i]];
        const name = V.frameName(frame);
        const children = index.get(node);
        let child = children.get(name);
        if (!child) {
          child = {name, value: 0, children: [], location: V.frameLocation(frame)};
          children.set(name, child);
          index.set(child, new Map());
          node.children.push(child);
        }
        child.value += value;
        node = child;
      }
    }
    const bySize = (node) => {
      node.children.sort((a, b) => b.value - a.value);
      node.children.forEach(bySize);
    };
    bySize(root);
    return root;
  };

  function section(id, title, ...content) {
    return el('section', {id, class: 'card'}, el('h2', null, title), content);
  }

  function summaryView(p) {
    const s = p.summary;
    const rows = [
      ['Program', p.program + ' (pid ' + p.pid + ')' + (p.running ? ' — still running: what it recorded so far'
        : p.complete ? '' : ' — incomplete: the process did not end normally')],
      ['Recorded', seconds(p.duration_us)],
      ['Allocations', V.formatCount(s.allocations) + ', ' + V.formatCount(s.frees) + ' frees (' +
        V.formatCount(s.reallocs) + ' by realloc)'],
      ['Bytes allocated', V.formatBytes(s.allocated_bytes) + ' (' + V.formatCount(s.allocated_bytes) + ' bytes)'],
      ['Peak', V.formatBytes(p.peak.bytes) + ' (' + V.formatCount(p.peak.bytes) + ' bytes) in ' +
        V.plural(p.peak.blocks, 'block') + ' at ' + seconds(p.peak.time_us)],
      ['RSS peak', p.peak.rss_bytes ? V.formatBytes(p.peak.rss_bytes) : 'no sample'],
      ['Temporary allocations', V.formatCount(s.temporary) + ' (' +
        (s.allocations ? (100 * s.temporary / s.allocations).toFixed(1) : '0') + '% of all allocations)'],
      [p.running ? 'Not freed yet' : 'Not freed at the end', V.formatBytes(s.leaked_bytes) + ' (' + V.formatCount(s.leaked_bytes) + ' bytes) in ' +
        V.plural(s.leaked_blocks, 'block')],
    ];
    if (s.unknown_frees) rows.push(['Frees of blocks allocated before the recording', V.formatCount(s.unknown_frees)]);
    if (p.sampling) {
      const n = p.sampling.not_sampled;
      rows.push(['Sampled', V.plural(p.sampling.sampled_allocations, 'allocation') + ' with a stack, about one per ' +
        V.formatBytes(p.sampling.interval_bytes) + ' allocated: the totals and the heap over time are exact, ' +
        'the sites are estimates (~)']);
      rows.push(['Not sampled', V.plural(n.allocations, 'allocation') + ' of ' + V.formatBytes(n.allocated_bytes) +
        ' with no stack (the estimates stand for them); ' + V.formatBytes(n.leaked_bytes) + ' in ' +
        V.plural(n.leaked_blocks, 'block') + ' not freed']);
    }
    return el('table', {class: 'grid profile-summary'}, el('tbody', null, rows.map(([k, v]) =>
      el('tr', {dataset: {key: k}}, el('th', null, k), el('td', null, v)))));
  }

  // A table of sites (ids of the JSON's top lists) with the given columns; a row opens its
  // stack. columns: [{title, cell(site, approx)}], approx: "~" before an estimate.
  function sitesTable(p, ids, columns, empty) {
    if (!ids.length) return el('p', {class: 'muted'}, empty);
    const sites = new Map(p.sites.map((s) => [s.stack_id, s]));
    const body = el('tbody');
    ids.forEach((id, rank) => {
      const site = sites.get(id);
      const leaf = V.leafFrame(site.stack);
      const row = el('tr', {class: 'expandable site', dataset: {stackId: id}},
        el('td', {class: 'num'}, String(rank + 1)),
        columns.map((c) => c.cell(site, p.sampling ? '~' : '')),
        el('td', {class: 'fn'}, leaf ? V.frameName(leaf) : '(no stack)'),
        el('td', {class: 'loc'}, leaf ? V.frameLocation(leaf) : ''));
      let detail = null;
      row.addEventListener('click', () => {
        if (detail) { detail.remove(); detail = null; row.classList.remove('open'); return; }
        detail = el('tr', {class: 'detail'}, el('td', {colspan: columns.length + 3}, V.stackView(site.stack, {})));
        row.after(detail);
        row.classList.add('open');
      });
      body.appendChild(row);
    });
    return el('div', {class: 'table-wrap'}, el('table', {class: 'grid sites'},
      el('thead', null, el('tr', null, el('th', {class: 'num'}, '#'), columns.map((c) => el('th', {class: 'num'}, c.title)),
                           el('th', null, 'Allocated in'), el('th', null, 'Location'))), body));
  }

  const COLUMN = {
    allocated: {title: 'Bytes allocated', cell: (s, a) => bytesCell(s.allocated_bytes, a)},
    allocations: {title: 'Allocations', cell: (s, a) => countCell(s.allocations, a)},
    temporary: {title: 'Temporary', cell: (s, a) => countCell(s.temporary, a)},
    temporaryShare: {title: 'Of its allocations', cell: (s) => el('td', {class: 'num'},
      (s.allocations ? (100 * s.temporary / s.allocations).toFixed(1) : '0') + '%')},
    peak: {title: 'Bytes at the peak', cell: (s, a) => bytesCell(s.peak_bytes, a)},
    peakBlocks: {title: 'Blocks', cell: (s, a) => countCell(s.peak_blocks, a)},
    leaked: {title: 'Bytes not freed', cell: (s, a) => bytesCell(s.leaked_bytes, a)},
    leakedBlocks: {title: 'Blocks', cell: (s, a) => countCell(s.leaked_blocks, a)},
    window: {title: 'Bytes kept', cell: (s, a) => bytesCell(s.window_bytes, a)},
    windowBlocks: {title: 'Blocks', cell: (s, a) => countCell(s.window_blocks, a)},
  };

  // What the chart's columns say of [fromUs, toUs), at the chart's step: the live bytes at both
  // ends, the highest in between, what was allocated. The sites that kept it need an analysis
  // of the window (memtrack report --from --to, or memtrack ui).
  V.chartInterval = function (chart, fromUs, toUs) {
    const step = chart.bucket_us;
    const first = Math.max(0, Math.floor(fromUs / step));
    const last = Math.min(chart.time_us.length - 1, Math.ceil(toUs / step) - 1);
    const out = {from_us: first * step, to_us: (last + 1) * step, allocated_bytes: 0, allocations: 0, heap_max_bytes: 0,
                 heap_start_bytes: first > 0 ? chart.heap_bytes[first - 1] : 0, heap_end_bytes: 0};
    for (let i = first; i <= last; i++) {
      out.allocated_bytes += chart.allocated_bytes[i];
      out.allocations += chart.allocations[i];
      out.heap_max_bytes = Math.max(out.heap_max_bytes, chart.heap_max_bytes[i]);
      out.heap_end_bytes = chart.heap_bytes[i];
    }
    return out;
  };

  function colors() {
    const style = getComputedStyle(document.documentElement);
    const get = (name) => style.getPropertyValue(name).trim();
    return {fg: get('--fg'), grid: get('--grid'), accent: get('--accent'), bad: get('--bad'), muted: get('--muted'),
            warn: get('--warn'), ok: get('--ok')};
  }

  // The chart: live bytes (highest in each step), RSS and the allocation rate (bytes per
  // second, right axis); the peak and the report's window marked. onSelect(fromUs, toUs).
  function heapChart(model, container, onSelect) {
    const chart = model.chart;
    const p = model.profile;
    const c = colors();
    const xs = chart.time_us.map((t) => t / 1e6);
    const rate = chart.allocated_bytes.map((b) => b / (chart.bucket_us / 1e6));
    const hasRss = chart.rss_bytes.some((v) => v > 0);
    const axis = {stroke: c.fg, grid: {stroke: c.grid}, ticks: {stroke: c.grid}};
    const series = [{label: 'time'},
      {label: 'live bytes', stroke: c.accent, width: 2, fill: c.accent + '22', value: (u, v) => (v == null ? '' : V.formatBytes(v))}];
    const data = [xs, chart.heap_max_bytes];
    if (hasRss) {
      series.push({label: 'RSS', stroke: c.muted, width: 1.5, spanGaps: true, value: (u, v) => (v ? V.formatBytes(v) : '-')});
      data.push(chart.rss_bytes.map((v) => v || null));
    }
    series.push({label: 'allocated per second', stroke: c.warn, width: 1, scale: 'rate',
                 value: (u, v) => (v == null ? '' : V.formatBytes(v) + '/s')});
    data.push(rate);
    const mark = (u, us, color, dash) => {
      const x = u.valToPos(us / 1e6, 'x', true);
      const ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.setLineDash(dash);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.restore();
    };
    const opts = {
      title: 'Heap over time (' + xs.length + ' steps of ' + (chart.bucket_us / 1000) + ' ms; drag to choose a window)',
      width: Math.max(container.clientWidth, 320), height: 260,
      scales: {x: {time: false}, rate: {}},
      cursor: {drag: {x: true, y: false, setScale: false}},
      axes: [Object.assign({values: (u, v) => v.map((s) => s + ' s')}, axis),
             Object.assign({size: 80, values: (u, v) => v.map((b) => V.formatBytes(b))}, axis),
             Object.assign({}, axis, {side: 1, scale: 'rate', size: 90, grid: {show: false},
                                      values: (u, v) => v.map((b) => V.formatBytes(b) + '/s')})],
      series,
      hooks: {
        draw: [(u) => {
          mark(u, p.peak.time_us, c.bad, []);
          if (p.window) {
            mark(u, p.window.from_us, c.ok, [4, 4]);
            mark(u, p.window.to_us, c.ok, [4, 4]);
          }
        }],
        setSelect: [(u) => {
          if (u.select.width < 2 || !onSelect) return;
          const from = u.posToVal(u.select.left, 'x');
          const to = u.posToVal(u.select.left + u.select.width, 'x');
          onSelect(Math.max(0, Math.round(from * 1e6)), Math.round(to * 1e6));
        }],
      },
    };
    return new uPlot(opts, data, container);
  }

  function windowReportView(p) {
    const w = p.window;
    return el('div', {class: 'window-report'},
      el('p', {class: 'totals'}, 'From ' + seconds(w.from_us) + ' to ' + seconds(w.to_us) + ': ' +
        V.formatBytes(w.bytes) + ' (' + V.formatCount(w.bytes) + ' bytes) in ' + V.plural(w.blocks, 'block') +
        ' allocated in the window and not freed in it.'),
      sitesTable(p, p.top.window, [COLUMN.window, COLUMN.windowBlocks], 'The window kept nothing.'));
  }

  // What a window chosen on the chart shows without an analysis of its own: the chart's figures,
  // and the command (or, in memtrack ui, the button) that lists the sites that kept it.
  function chosenWindowView(model, fromUs, toUs, loadWindow) {
    const i = V.chartInterval(model.chart, fromUs, toUs);
    const growth = i.heap_end_bytes - i.heap_start_bytes;
    const parts = [
      el('p', {class: 'chosen-window', dataset: {fromUs: i.from_us, toUs: i.to_us}},
        'Chosen on the chart: ' + seconds(i.from_us) + ' to ' + seconds(i.to_us) + '. Live bytes went from ' +
        V.formatBytes(i.heap_start_bytes) + ' to ' + V.formatBytes(i.heap_end_bytes) + ' (' +
        (growth >= 0 ? '+' : '−') + V.formatBytes(Math.abs(growth)) + '), highest ' + V.formatBytes(i.heap_max_bytes) +
        '; ' + V.formatBytes(i.allocated_bytes) + ' allocated in ' + V.plural(i.allocations, 'allocation') + '.'),
    ];
    if (loadWindow) {
      parts.push(el('button', {class: 'analyse-window', onclick: () => loadWindow(i.from_us, i.to_us)},
                    'Analyse this window: the sites that kept its bytes'));
    } else {
      parts.push(el('p', {class: 'muted'}, 'The sites that allocated in it and kept their blocks: ',
                    el('code', {class: 'window-command'}, 'memtrack report PROFILE --from=' + ms(i.from_us) +
                       ' --to=' + ms(i.to_us) + ' --html=FILE')));
    }
    return el('div', null, parts);
  }

  // Returns {element, draw(), chart, select(kind), view} for one quantity at a time.
  function flameView(model) {
    const kinds = FLAME_KINDS.filter((k) => k.key !== 'window_bytes' || model.profile.window);
    const picker = el('select', {'aria-label': 'Flame graph of', class: 'flame-kind'},
      kinds.map((k) => el('option', {value: k.key}, k.label)));
    picker.value = 'allocated_bytes';
    const holder = el('div');
    const note = el('p', {class: 'muted small'}, model.stacks.length < model.sites_total
      ? 'The ' + V.formatCount(model.stacks.length) + ' largest of ' + V.formatCount(model.sites_total) +
        ' sites are drawn; the others are narrower than a pixel.' : '');
    const element = el('div', {class: 'profile-flame'}, el('div', {class: 'toolbar'}, el('label', null, 'Flame graph of ', picker)),
                       holder, note);
    const api = {element, view: null, kind: 'allocated_bytes'};
    api.select = function (key) {
      const kind = kinds.find((k) => k.key === key) || kinds[0];
      picker.value = kind.key;
      api.kind = kind.key;
      api.view = V.flameGraphView(null, {tree: () => V.profileFlameTree(model, kind.key), format: kind.format,
                                         what: kind.what, empty: 'Nothing to draw: no ' + kind.what.replace(/^the /, '') + '.'});
      holder.replaceChildren(api.view.element);
      api.view.draw();
    };
    api.draw = () => api.select(api.kind);
    picker.addEventListener('change', () => api.select(picker.value));
    return api;
  }

  V.renderProfile = function (root, model, options) {
    const opts = options || {};
    const p = model.profile;
    const views = {kind: 'profile', model, chart: null, flame: null};
    const nav = el('nav', null, [['summary', 'Summary'], ['heap', 'Heap over time'], ['peak', 'Peak'],
      ['sites', 'Top sites'], ['temporary', 'Temporary'], ['window', 'Window'], ['flame', 'Flame graphs']]
      .map(([id, title]) => el('a', {href: '#' + id, id: 'nav-' + id}, title)));
    const chartBox = el('div', {class: 'heap-chart'});
    const windowBox = el('div', {class: 'window-box'});
    const chosenBox = el('div', {class: 'chosen-box'});
    views.flame = flameView(model);
    const top = p.top;
    windowBox.append(p.window ? windowReportView(p)
      : el('p', {class: 'muted no-window'}, 'No window was given (memtrack report --from=TIME --to=TIME). Drag across the chart to choose one.'));
    views.selectWindow = function (fromUs, toUs) {
      chosenBox.replaceChildren(chosenWindowView(model, fromUs, toUs, opts.loadWindow));
      views.chosen = V.chartInterval(model.chart, fromUs, toUs);
      return views.chosen;
    };
    root.replaceChildren(
      el('header', null, el('h1', null, 'memtrack heap profile'),
         el('span', {class: 'muted'}, V.profileLabel(p) + ' · memtrack ' + (model.version || '')), nav),
      el('main', null,
        section('summary', 'Summary', summaryView(p)),
        section('heap', 'Heap over time', chartBox),
        section('peak', 'Peak: ' + V.formatBytes(p.peak.bytes) + ' at ' + seconds(p.peak.time_us) + ', held by',
          el('p', {class: 'totals peak-totals'}, V.formatCount(p.peak.bytes) + ' bytes in ' + V.plural(p.peak.blocks, 'block') +
             ' were live at ' + seconds(p.peak.time_us) + ' (the red line on the chart); the sites that held the most:'),
          sitesTable(p, top.peak, [COLUMN.peak, COLUMN.peakBlocks], 'Nothing was live at the peak.')),
        section('sites', 'Top sites',
          el('h3', null, 'By bytes allocated'),
          el('div', {class: 'list-allocated'}, sitesTable(p, top.allocated, [COLUMN.allocated, COLUMN.allocations], 'No allocation.')),
          el('h3', null, 'By number of allocations'),
          el('div', {class: 'list-allocations'}, sitesTable(p, top.allocations, [COLUMN.allocations, COLUMN.allocated], 'No allocation.')),
          el('h3', null, p.running ? 'By bytes not freed yet' : 'By bytes not freed at the end (leaked)'),
          el('div', {class: 'list-leaked'}, sitesTable(p, top.leaked, [COLUMN.leaked, COLUMN.leakedBlocks], 'Everything was freed.'))),
        section('temporary', 'Temporary allocations: ' + V.formatCount(p.summary.temporary),
          el('p', {class: 'muted small'}, 'Freed by their thread with no other allocation or free in between (as heaptrack counts them).'),
          el('div', {class: 'list-temporary'}, sitesTable(p, top.temporary, [COLUMN.temporary, COLUMN.temporaryShare, COLUMN.allocated],
                                                         'No temporary allocation.'))),
        section('window', 'Time window: what it allocated and kept', windowBox, chosenBox),
        section('flame', 'Flame graphs', views.flame.element)));
    views.chart = heapChart(model, chartBox, (from, to) => views.selectWindow(from, to));
    chartBox.dataset.drawn = 'true';
    setTimeout(() => views.flame.draw(), 0);
    return views;
  };
})(window.MemtrackViews);
