/* What the boards' and the buyer pages' tables share: figure cells, a header's definition
 * link, and the note above a table wider than the page. */
import { el, onResize } from './dom.js';
import { fmt, plural } from './format.js';

// A figure's cell: right-aligned, as people read it, the exact value in the tooltip.
export function numCell(value, format) {
  var td = el('td', { 'class': 'epb-num' }, fmt(value, format));
  if (typeof value === 'number') { td.title = String(value); }
  return td;
}

// A header's "?": the column's definition in the tooltip, a link to its methodology section
// (`methodology`, the page's address of it).
export function defLink(col, methodology) {
  return el('a', { 'class': 'epb-def', href: methodology + (col.anchor ? '#' + col.anchor : ''),
    title: col.help, 'aria-label': 'Definition of ' + col.label }, '?');
}

// Appends " ?" to a header cell when its column has a definition.
export function addDefinition(th, col, methodology) {
  if (!col.help) { return; }
  th.appendChild(document.createTextNode(' '));
  th.appendChild(defLink(col, methodology));
}

// A table wider than its scroll box says so in `hint` (a <p> above it), with how many
// columns lie to the right and the first of their names; hidden when the table fits.
export function scrollHint(scroll, table, hint) {
  var heads = table.tHead ? table.tHead.rows[0].cells : [];
  var edge = scroll.getBoundingClientRect().right;
  var hidden = Array.prototype.filter.call(heads, function (th) {
    return th.getBoundingClientRect().right > edge + 1;
  }).length;
  hint.hidden = hidden === 0;
  hint.textContent = hidden ? 'The table is wider than the page: scroll it sideways for ' +
    plural(hidden, 'more column') + ' (' + Array.prototype.slice.call(heads, -hidden)
    .map(function (th) { return th.textContent.replace(/\s*\?$/, ''); }).slice(0, 4).join(', ') +
    (hidden > 4 ? ', \u2026' : '') + ').' : '';
}

// The page's own tables with a header row (a result's points, an endpoint's runs) get the
// boards' note when they are wider than the page; measured on load and on resize.
export function staticHints() {
  var found = [];
  Array.prototype.forEach.call(document.querySelectorAll('.md-content .epb-scroll'), function (scroll) {
    var table = scroll.querySelector('table');
    if (!table || !table.tHead || !table.tHead.rows.length || scroll.closest('#epb-board')) { return; }
    var hint = el('p', { 'class': 'epb-scroll-hint', hidden: 'hidden' });
    scroll.parentNode.insertBefore(hint, scroll);
    found.push([scroll, table, hint]);
  });
  if (!found.length) { return; }
  var update = function () { found.forEach(function (f) { scrollHint(f[0], f[1], f[2]); }); };
  update();
  onResize(update, 150);
}
