// The leak table view: one row per leak group of a process (its JSON "leaks"), sortable by
// bytes, blocks, kind and function, filtered by text over the function, file and module
// names of the group's printed frames; a row expands to its stack with source lines.
// Rows are added a page at a time so a report of 10,000 groups opens at once.
(function (V) {
  'use strict';
  const el = V.el;
  const PAGE = 200;

  const COLUMNS = [
    {key: 'kind', title: 'Kind'},
    {key: 'bytes', title: 'Bytes', num: true},
    {key: 'blocks', title: 'Blocks', num: true},
    {key: 'function', title: 'Allocated in'},
    {key: 'location', title: 'Location'},
    {key: 'module', title: 'Module'},
  ];

  const COMPARE = {
    bytes: (a, b) => a.group.bytes - b.group.bytes || a.group.blocks - b.group.blocks,
    blocks: (a, b) => a.group.blocks - b.group.blocks || a.group.bytes - b.group.bytes,
    kind: (a, b) => V.KIND_ORDER[b.group.kind] - V.KIND_ORDER[a.group.kind] ||
                    a.group.bytes - b.group.bytes,
    function: (a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0),
    location: (a, b) => (a.location < b.location ? 1 : a.location > b.location ? -1 : 0),
    module: (a, b) => (a.module < b.module ? 1 : a.module > b.module ? -1 : 0),
  };

  // Returns {element, sort(key, descending), filter(text), rows()}.
  V.leakTableView = function (process, sources) {
    const entries = process.leaks.map((group, index) => {
      const leaf = V.leafFrame(group.stack);
      return {
        index, group,
        name: leaf ? V.frameName(leaf) : '(no stack)',
        location: leaf ? V.frameLocation(leaf) : '',
        module: leaf ? V.basename(leaf.module) : '',
        haystack: null,
      };
    });
    const state = {key: 'bytes', descending: true, text: '', shown: PAGE, view: entries.slice()};
    const expanded = new Set();

    const filterInput = el('input', {type: 'search', class: 'filter', placeholder: 'Filter by function, file or module',
                                     'aria-label': 'Filter leak groups'});
    const count = el('span', {class: 'muted count'});
    const body = el('tbody');
    const head = el('tr', null, el('th', {class: 'toggle'}, ''), COLUMNS.map((c) => {
      const th = el('th', {class: 'sortable' + (c.num ? ' num' : ''), dataset: {sort: c.key}, tabindex: 0}, c.title);
      const choose = () => api.sort(c.key, state.key === c.key ? !state.descending : c.num || c.key === 'kind');
      th.addEventListener('click', choose);
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter') choose(); });
      return th;
    }));
    const more = el('button', {class: 'more'});
    more.addEventListener('click', () => { state.shown += PAGE; draw(); });
    const element = el('div', {class: 'leak-table'},
      el('div', {class: 'toolbar'}, filterInput, count),
      el('div', {class: 'table-wrap'}, el('table', {class: 'grid leaks'}, el('thead', null, head), body)),
      more);

    let timer = 0;
    filterInput.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => api.filter(filterInput.value), 120);
    });

    function haystack(entry) {
      if (entry.haystack === null) {
        const stack = entry.group.stack;
        const parts = [];
        for (let i = 0, n = V.printedCount(stack); i < n; i++) {
          const f = stack[i];
          parts.push(f.function, f.file, f.module);
        }
        entry.haystack = parts.join('\n').toLowerCase();
      }
      return entry.haystack;
    }

    function recompute() {
      const text = state.text.trim().toLowerCase();
      const view = text ? entries.filter((e) => haystack(e).includes(text)) : entries.slice();
      const compare = COMPARE[state.key];
      view.sort(state.descending ? (a, b) => compare(b, a) || a.index - b.index
                                 : (a, b) => compare(a, b) || a.index - b.index);
      state.view = view;
    }

    function row(entry) {
      const g = entry.group;
      const tr = el('tr', {class: 'expandable kind-' + g.kind, dataset: {index: entry.index}},
        el('td', {class: 'toggle'}, '▸'),
        el('td', null, el('span', {class: 'badge kind-' + g.kind, title: V.KIND_TITLE[g.kind]}, g.kind)),
        el('td', {class: 'num', title: V.formatCount(g.bytes) + ' bytes'}, V.formatBytes(g.bytes),
           g.indirect_bytes ? el('div', {class: 'muted small'}, '+ ' + V.formatBytes(g.indirect_bytes) + ' indirect') : null),
        el('td', {class: 'num'}, V.formatCount(g.blocks)),
        el('td', {class: 'fn'}, entry.name),
        el('td', {class: 'loc'}, entry.location),
        el('td', {class: 'module'}, entry.module));
      tr.addEventListener('click', () => {
        if (expanded.has(entry.index)) expanded.delete(entry.index);
        else expanded.add(entry.index);
        toggle(tr, entry);
      });
      return tr;
    }

    function toggle(tr, entry) {
      const open = expanded.has(entry.index);
      const next = tr.nextElementSibling;
      if (next && next.classList.contains('detail')) next.remove();
      tr.classList.toggle('open', open);
      tr.firstChild.textContent = open ? '▾' : '▸';
      if (!open) return;
      const g = entry.group;
      tr.after(el('tr', {class: 'detail'}, el('td', {colspan: COLUMNS.length + 1},
        el('div', {class: 'detail-head'}, V.formatCount(g.bytes) + ' bytes in ' + V.plural(g.blocks, 'block') + ' ' +
           V.KIND_TITLE[g.kind] + (g.indirect_bytes ? ' (' + V.formatCount(g.indirect_bytes) +
           ' more bytes in ' + V.plural(g.indirect_blocks, 'block') + ' hang off them)' : '')),
        V.stackView(g.stack, sources),
        g.suppression ? el('div', {class: 'suppression'}, el('span', {class: 'muted'}, 'suppress with: '),
                           el('code', null, g.suppression)) : null)));
    }

    function draw() {
      const rows = document.createDocumentFragment();
      const visible = state.view.slice(0, state.shown);
      const reopen = [];
      for (const entry of visible) {
        const tr = row(entry);
        rows.appendChild(tr);
        if (expanded.has(entry.index)) reopen.push([tr, entry]);
      }
      body.replaceChildren(rows);
      element.dataset.filter = state.text;  // what the rows show, for scripts and tests
      for (const [tr, entry] of reopen) toggle(tr, entry);
      if (!entries.length) body.appendChild(el('tr', null, el('td', {colspan: COLUMNS.length + 1, class: 'muted'}, 'No leaks.')));
      count.textContent = (state.view.length === entries.length ? '' : V.formatCount(state.view.length) + ' of ') +
        V.formatCount(entries.length) + ' groups';
      const left = state.view.length - visible.length;
      more.hidden = left <= 0;
      more.textContent = 'Show ' + Math.min(PAGE, left) + ' more (' + V.formatCount(left) + ' not shown)';
      for (const th of head.querySelectorAll('th.sortable')) {
        const active = th.dataset.sort === state.key;
        th.classList.toggle('sorted', active);
        th.setAttribute('aria-sort', active ? (state.descending ? 'descending' : 'ascending') : 'none');
      }
    }

    const api = {
      element,
      sort(key, descending) {
        state.key = key;
        state.descending = descending;
        state.shown = PAGE;
        recompute();
        draw();
      },
      filter(text) {
        state.text = text;
        if (filterInput.value !== text) filterInput.value = text;
        state.shown = PAGE;
        recompute();
        draw();
      },
      rows: () => state.view.map((e) => e.group),
    };
    recompute();
    draw();
    return api;
  };
})(window.MemtrackViews);
