// The chart views: a flame graph (or icicle) of leaked bytes by allocation stack, drawn by
// d3-flame-graph, and the live-mode charts (old bytes per site over time), drawn by uPlot.
// Both need their element in the page (they measure its width): create, insert, then call
// the returned draw().
(function (V) {
  'use strict';
  const el = V.el;

  // The tree of the listed groups' printed frames, main (or the thread's start) at the root,
  // frames merged by name as flamegraph.pl merges them; values are bytes.
  V.flameTree = function (process) {
    const root = {name: V.processLabel(process), value: 0, children: []};
    const index = new Map([[root, new Map()]]);
    for (const group of process.leaks) {
      const stack = group.stack;
      let node = root;
      root.value += group.bytes;
      for (let i = V.printedCount(stack) - 1; i >= 0; i--) {
        const name = V.frameName(stack[i]);
        const children = index.get(node);
        let child = children.get(name);
        if (!child) {
          child = {name, value: 0, children: [], location: V.frameLocation(stack[i])};
          children.set(name, child);
          index.set(child, new Map());
          node.children.push(child);
        }
        child.value += group.bytes;
        node = child;
      }
    }
    return root;
  };

  // Returns {element, draw(), chart, search(text), zoomTo(name), reset(), setInverted(bool)}.
  // Without options it draws V.flameTree(process); a heap profile's page gives its own tree
  // (options.tree()), the formatter of its values (options.format, bytes by default) and what
  // they are (options.what, 'the leaked bytes').
  V.flameGraphView = function (process, options) {
    const opts = options || {};
    const format = opts.format || V.formatBytes;
    const what = opts.what || 'the leaked bytes';
    const graph = el('div', {class: 'flame-graph'});
    const details = el('div', {class: 'flame-details muted'}, 'Click a frame to zoom in; hover for its bytes.');
    const search = el('input', {type: 'search', class: 'filter', placeholder: 'Search frames', 'aria-label': 'Search frames'});
    const reset = el('button', null, 'Reset zoom');
    const icicle = el('label', {class: 'check'}, el('input', {type: 'checkbox'}), ' Icicle (root on top)');
    const element = el('div', {class: 'flame'}, el('div', {class: 'toolbar'}, search, reset, icicle), graph, details);
    const api = {element, chart: null};

    // Built when drawn: a large report's tree takes a moment, and the page is usable before.
    api.draw = function () {
      const tree = opts.tree ? opts.tree() : V.flameTree(process);
      if (!tree.value) {
        graph.replaceChildren(el('p', {class: 'muted'}, opts.empty || 'No leaked bytes to draw.'));
        element.dataset.drawn = 'true';
        return;
      }
      const width = Math.max(graph.clientWidth, 320);
      const total = tree.value;
      const chart = flamegraph.default()
        .width(width)
        .cellHeight(18)
        .minFrameSize(1)
        .transitionDuration(0)  // the first drawing appears at once; zooms are animated
        .sort(false)  // children stay largest first (groups come by bytes); sorting 100,000 names costs
        .selfValue(false)
        .setDetailsElement(details)
        .setLabelHandler((d) => d.data.name + (d.data.location ? ' — ' + d.data.location : '') + ': ' +
          format(d.value) + ' (' + (100 * d.value / total).toFixed(1) + '%)')
        .setSearchMatch((d, term) => term && d.data.name.toLowerCase().includes(term.toLowerCase()))
        .setSearchHandler((results, sum) => {
          details.textContent = search.value ? results.length + ' frames match, ' + format(sum) +
            ' (' + (100 * sum / total).toFixed(1) + '% of ' + what + ')' : '';
        });
      d3.select(graph).datum(tree).call(chart);
      chart.transitionDuration(250);
      api.chart = chart;
      element.dataset.drawn = 'true';
      api.drawnMs = performance.now();
    };
    api.search = (text) => {
      search.value = text;
      if (!api.chart) return;
      if (text) api.chart.search(text);
      else api.chart.clear();
    };
    api.reset = () => api.chart && api.chart.resetZoom();
    api.setInverted = (on) => {
      icicle.firstChild.checked = on;
      if (api.chart) api.chart.inverted(on).update();
    };
    let timer = 0;
    search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => api.search(search.value), 150);
    });
    reset.addEventListener('click', api.reset);
    icicle.firstChild.addEventListener('change', () => api.setInverted(icicle.firstChild.checked));
    return api;
  };

  // --- live mode ------------------------------------------------------------------------------

  const siteKey = (stack) => stack.slice(0, V.printedCount(stack))
    .map((f) => V.frameName(f) + '@' + V.frameLocation(f)).join('|');

  // The series of one process's live reports: times (s since the runtime started), the
  // process's live and old bytes, and per site its old bytes at each report (0 when absent)
  // and whether any report marked it growing. Sites: growing ones first, then by most bytes.
  V.liveSeries = function (reports) {
    const sorted = reports.slice().sort((a, b) => a.sequence - b.sequence);
    const times = sorted.map((r) => r.uptime_ms / 1000);
    const sites = new Map();
    sorted.forEach((r, j) => {
      for (const s of r.sites) {
        const key = siteKey(s.stack);
        let site = sites.get(key);
        if (!site) {
          site = {stack: s.stack, bytes: new Array(sorted.length).fill(0), growing: false, max: 0};
          sites.set(key, site);
        }
        site.bytes[j] = s.bytes;
        site.growing = site.growing || s.growing;
        site.max = Math.max(site.max, s.bytes);
      }
    });
    const list = Array.from(sites.values())
      .sort((a, b) => (b.growing - a.growing) || b.max - a.max);
    return {times, live: sorted.map((r) => r.live_bytes), old: sorted.map((r) => r.old_bytes), sites: list,
            expire_ms: sorted.length ? sorted[0].expire_ms : 0};
  };

  function colors() {
    const style = getComputedStyle(document.documentElement);
    const get = (name) => style.getPropertyValue(name).trim();
    return {fg: get('--fg'), grid: get('--grid'), accent: get('--accent'), bad: get('--bad'), muted: get('--muted')};
  }

  function plot(container, width, title, xs, series, c) {
    const opts = {
      title, width, height: 170,
      scales: {x: {time: false}},
      legend: {show: series.length > 1},
      axes: [
        {stroke: c.fg, grid: {stroke: c.grid}, ticks: {stroke: c.grid}, values: (u, v) => v.map((s) => s + ' s')},
        {stroke: c.fg, grid: {stroke: c.grid}, ticks: {stroke: c.grid}, size: 70,
         values: (u, v) => v.map((b) => V.formatBytes(b))},
      ],
      series: [{label: 'uptime'}].concat(series.map((s) => ({
        label: s.label, stroke: s.color, width: 2, fill: s.fill, points: {show: xs.length < 40},
        value: (u, v) => (v === null || v === undefined ? '' : V.formatBytes(v)),
      }))),
    };
    return new uPlot(opts, [xs].concat(series.map((s) => s.values)), container);
  }

  const MAX_SITE_CHARTS = 30;

  // Returns {element, draw(), plots}; reports: the live reports of one process.
  V.liveView = function (reports, sources) {
    const data = V.liveSeries(reports);
    const overall = el('div', {class: 'live-overall'});
    const grid = el('div', {class: 'live-grid'});
    const growing = data.sites.filter((s) => s.growing).length;
    const element = el('div', {class: 'live'},
      el('p', null, V.plural(reports.length, 'live report') + ' (blocks older than ' + (data.expire_ms / 1000) + ' s); ' +
         V.plural(data.sites.length, 'site') + ' held old blocks, ',
         el('span', {class: growing ? 'bad' : ''}, growing + ' of them GROWING'), '.'),
      overall, grid,
      data.sites.length > MAX_SITE_CHARTS ? el('p', {class: 'muted'}, 'The ' + MAX_SITE_CHARTS +
        ' first sites are drawn; ' + (data.sites.length - MAX_SITE_CHARTS) + ' more are in the live reports.') : null);
    const api = {element, plots: [], data};
    api.draw = function () {
      const c = colors();
      api.plots.push(plot(overall, Math.max(overall.clientWidth, 320), 'Process', data.times, [
        {label: 'live bytes', color: c.accent, values: data.live},
        {label: 'old bytes', color: c.bad, values: data.old},
      ], c));
      for (const site of data.sites.slice(0, MAX_SITE_CHARTS)) {
        const leaf = V.leafFrame(site.stack);
        const card = el('div', {class: 'live-site' + (site.growing ? ' growing' : '')},
          el('div', {class: 'live-site-head'},
            site.growing ? el('span', {class: 'badge bad'}, 'GROWING') : null,
            el('span', {class: 'fn'}, leaf ? V.frameName(leaf) : '?'),
            el('span', {class: 'loc'}, leaf ? V.frameLocation(leaf) : '')));
        const chartBox = el('div');
        card.appendChild(chartBox);
        const stack = el('details', null, el('summary', null, 'stack'));
        stack.addEventListener('toggle', () => {
          if (stack.open && stack.childNodes.length === 1) stack.appendChild(V.stackView(site.stack, sources));
        }, {once: false});
        card.appendChild(stack);
        grid.appendChild(card);
        api.plots.push(plot(chartBox, Math.max(chartBox.clientWidth, 260), 'old bytes', data.times, [
          {label: 'old bytes', color: site.growing ? c.bad : c.accent, values: site.bytes},
        ], c));
      }
    };
    return api;
  };
})(window.MemtrackViews);
