/* The rows a reader sees, saved as CSV or JSON in the page (the same dialect as the site's
 * downloads: docs/tables.md). */
import { el } from './dom.js';

function csvCell(value) {
  if (value === null || value === undefined) { return ''; }
  var text = Array.isArray(value) ? value.join(';')
    : (typeof value === 'object' ? JSON.stringify(value) : String(value));
  // A spreadsheet must not read submitted text as a formula.
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) { text = "'" + text; }
  if (/[",\n\r]/.test(text)) { text = '"' + text.replace(/"/g, '""') + '"'; }
  return text;
}

export function toCsv(rows, columns) {
  var lines = [columns.join(',')];
  rows.forEach(function (row) {
    lines.push(columns.map(function (c) { return csvCell(row[c]); }).join(','));
  });
  return lines.join('\r\n') + '\r\n';
}

// Saves `text` as a file named `name`, built in the page (nothing is sent anywhere).
export function download(text, type, name) {
  var url = URL.createObjectURL(new Blob([text], { type: type }));
  var a = el('a', { href: url, download: name });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
}
