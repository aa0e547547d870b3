// What keeps the still-reachable memory alive (memtrack run --show-retainers,
// docs/retention.md): the heap's dominator tree summed by allocation site, as a table people
// expand from a root down (Eclipse MAT's dominator tree), and the one block of
// `memtrack snapshot --retainers ADDR`. Reads processes[].retention and
// processes[].block_retention of the JSON report (docs/json-schema.md).
(function (V) {
  'use strict';
  const el = V.el;

  // The tree's nodes: the roots that keep something, "several roots" and "the C runtime's
  // roots" at the top; under a root the groups it holds directly; under a group the groups
  // whose parent it is. Each node: {name, site, retained_bytes, retained_blocks, bytes,
  // blocks, stack, children}; the largest retained size first at every level.
  V.retentionTree = function (retention) {
    const groups = retention.groups.map((g) => ({
      name: g.site || '?',
      site: true,
      retained_bytes: g.retained_bytes,
      retained_blocks: g.retained_blocks,
      bytes: g.bytes,
      blocks: g.blocks,
      stack: g.stack,
      children: [],
    }));
    const roots = retention.roots.map((r) => ({
      name: r.name,
      site: false,
      retained_bytes: r.retained_bytes,
      retained_blocks: r.retained_blocks,
      children: [],
    }));
    const several = {name: 'several roots, none alone', site: false, retained_bytes: 0,
                     retained_blocks: 0, children: []};
    const runtime = {name: "the C runtime's roots only", site: false, retained_bytes: 0,
                     retained_blocks: 0, children: []};
    retention.groups.forEach((g, i) => {
      let parent = null;
      if (g.parent !== undefined) parent = groups[g.parent];
      else if (g.holder_kind === 'root') parent = roots[g.holder_root];
      else if (g.holder_kind === 'several_roots') parent = several;
      else if (g.holder_kind === 'runtime') parent = runtime;
      // Held by blocks of the C/C++ runtime's own, which the report leaves out.
      if (!parent) parent = runtime;
      parent.children.push(groups[i]);
      if (parent === several || parent === runtime) {
        parent.retained_bytes += g.retained_bytes;
        parent.retained_blocks += g.retained_blocks;
      }
    });
    const bySize = (a, b) => b.retained_bytes - a.retained_bytes || a.name.localeCompare(b.name);
    const sortAll = (nodes) => {
      nodes.sort(bySize);
      for (const n of nodes) sortAll(n.children);
      return nodes;
    };
    return sortAll(roots.concat([several, runtime]).filter((n) => n.children.length));
  };

  // The tree as a table: a click on a row with children opens or closes it, a click on a
  // site's location shows its stack. The roots' rows start open down to the first site.
  V.retentionView = function (process, sources) {
    const retention = process.retention;
    if (!retention) return null;
    const tree = V.retentionTree(retention);
    if (!tree.length) return el('p', {class: 'muted'}, 'No still-reachable blocks are held.');
    const body = el('tbody');
    const total = tree.reduce((sum, n) => sum + n.retained_bytes, 0) || 1;

    function row(node, depth, after) {
      const toggle = node.children.length
        ? el('button', {class: 'tree-toggle', 'aria-expanded': 'false',
                        'aria-label': 'Show what it holds'}, '▸')
        : el('span', {class: 'tree-toggle leaf'}, '');
      const name = node.site ? el('span', {class: 'fn'}, node.name) : el('strong', null, node.name);
      const share = el('span', {class: 'share', style: 'width:' +
                                (100 * node.retained_bytes / total).toFixed(1) + '%'});
      const tr = el('tr', {class: 'tree-row' + (node.site ? ' site' : ' root'), dataset: {depth}},
        el('td', {class: 'tree-name', style: 'padding-left:' + (0.4 + depth * 1.2) + 'em'}, toggle, ' ', name),
        el('td', {class: 'num'}, el('div', {class: 'share-bar'}, share), V.formatBytes(node.retained_bytes)),
        el('td', {class: 'num'}, V.formatCount(node.retained_blocks)),
        el('td', {class: 'num'}, node.site ? V.formatBytes(node.bytes) : ''),
        el('td', {class: 'num'}, node.site ? V.formatCount(node.blocks) : ''));
      after.after(tr);
      let shown = [];
      let stackRow = null;
      const close = () => {
        for (const r of shown) r.close();
        shown = [];
        toggle.textContent = '▸';
        toggle.setAttribute('aria-expanded', 'false');
      };
      const open = () => {
        let last = stackRow || tr;
        for (const child of node.children) {
          const made = row(child, depth + 1, last);
          shown.push(made);
          last = made.last();
        }
        toggle.textContent = '▾';
        toggle.setAttribute('aria-expanded', 'true');
      };
      if (node.children.length) {
        toggle.addEventListener('click', () => (shown.length ? close() : open()));
      }
      if (node.site && node.stack) {
        name.classList.add('link');
        name.addEventListener('click', () => {
          if (stackRow) { stackRow.remove(); stackRow = null; return; }
          stackRow = el('tr', {class: 'detail'}, el('td', {colspan: 5}, V.stackView(node.stack, sources)));
          tr.after(stackRow);
        });
      }
      const made = {
        tr,
        open,
        close: () => { close(); if (stackRow) stackRow.remove(); stackRow = null; tr.remove(); },
        // The last row this node shows, its open subtree included.
        last: () => (shown.length ? shown[shown.length - 1].last() : stackRow || tr),
      };
      return made;
    }

    const anchor = el('tr', {hidden: true});
    body.appendChild(anchor);
    let last = anchor;
    for (const node of tree) {
      const made = row(node, 0, last);
      if (node.children.length) made.open();
      last = made.last();
    }
    const shared = retention.shared_bytes
      ? el('p', {class: 'muted'}, V.formatBytes(retention.shared_bytes) + ' in ' +
           V.plural(retention.shared_blocks, 'block') + ' are reachable from several roots and kept by none alone.')
      : null;
    return el('div', {class: 'retention'},
      retention.approximate
        ? el('p', {class: 'warn'}, 'Approximate: some holders may be too deep (memory ran short, or the tree did not settle).')
        : null,
      el('p', {class: 'muted'}, 'Each root with what it alone keeps alive; under it, the allocation sites of the ' +
         'blocks it holds, each with the sites its blocks hold in turn (the dominator tree by site). Retained: ' +
         'what would be freed with it; own: the site\'s blocks at that place.'),
      el('div', {class: 'table-wrap'}, el('table', {class: 'grid retention-tree'},
        el('thead', null, el('tr', null, ['Held by / allocated at', 'Retained', 'Blocks', 'Own bytes', 'Own blocks']
          .map((h) => el('th', null, h)))), body)),
      shared);
  };

  // memtrack snapshot --retainers ADDR: the block, its chain up to the root, its referrers.
  V.blockRetentionView = function (block, sources) {
    if (!block) return null;
    if (!block.found) return el('p', null, 'No live block holds ' + block.address + '.');
    const linkItem = (link) => el('li', null, link.kind === 'block'
      ? [el('code', null, link.start), ' (' + V.plural(link.size, 'byte') + ') allocated at ',
         el('span', {class: 'fn'}, link.site), link.offset ? ' (pointer at offset ' + link.offset + ')' : '']
      : [el('strong', null, link.root), link.address ? ' (at ' + link.address + ')' : '']);
    return el('div', {class: 'block-retention'},
      el('p', null, el('code', null, block.address), ': ' + V.plural(block.size, 'byte') + ' at ',
         el('code', null, block.start), ', ' + (V.KIND_TITLE[block.kind] || block.kind) + ', allocated at ',
         el('span', {class: 'fn'}, block.site), '; keeps ' + V.formatBytes(block.retained_bytes) + ' in ' +
         V.plural(block.retained_blocks, 'block') + ' alive (itself included).'),
      V.stackView(block.stack, sources),
      el('h4', null, 'Held by (nearest first)'),
      block.chain.length ? el('ol', {class: 'chain'}, block.chain.map(linkItem)) : el('p', {class: 'muted'}, 'nothing: it is not reachable'),
      el('h4', null, 'Pointed to from'),
      block.referrers.length ? el('ul', {class: 'referrers'}, block.referrers.map(linkItem)) : el('p', {class: 'muted'}, 'nothing'));
  };
})(window.MemtrackViews);
