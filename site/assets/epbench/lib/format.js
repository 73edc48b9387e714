/* Numbers as people read them, the same rules as epbench.generator.number_format
 * (tests/browser/test_number_format_js.py holds the two to each other). */

// Thousands separators without Intl: toLocaleString costs ~20 us a call, too much for
// thousands of cells per filter change.
export function grouped(n) {
  var text = String(Math.abs(n));
  var out = '';
  while (text.length > 3) {
    out = ',' + text.slice(-3) + out;
    text = text.slice(0, -3);
  }
  return (n < 0 ? '-' : '') + text + out;
}

// Below this a figure is zero within float noise (a Wilson bound at no successes comes out
// as 1e-17): it shows as 0, as number_format.py's NOISE.
var NOISE = 1e-12;

// Three significant figures, thousands separated, never an exponent (as number_format.py's
// fmt_number): 2061.3 -> "2,060", 0.00008687 -> "0.0000869", 1e-7 -> "0.0000001".
function sig3(v) {
  if (Math.abs(v) < NOISE) { return '0'; }
  var r = Number(v.toPrecision(3));
  if (Math.abs(r) >= 1000) { return grouped(Math.round(r)); }
  if (Math.abs(r) < 1e-6) {
    return r.toFixed(2 - Math.floor(Math.log10(Math.abs(r)))).replace(/\.?0+$/, '');
  }
  return String(r);
}

// Dollars to three significant figures, with whole cents under $1,000: 1.5 -> "$1.50",
// 25 -> "$25.00", 0.0938 -> "$0.0938", 1160 -> "$1,160".
function usd(v) {
  var text = sig3(v);
  var dot = text.indexOf('.');
  var decimals = dot < 0 ? 0 : text.length - dot - 1;
  if (Math.abs(Number(v.toPrecision(3))) < 1000 && Math.abs(v) >= 1e-6 && decimals < 2) { text = v.toFixed(2); }
  return (text.charAt(0) === '-' ? '-$' + text.slice(1) : '$' + text);
}

// A value as people read it. Formats: usd, pct (a 0..1 share), int, tps, ms, num.
// Integers stay exact unless a unit format applies; the exact value goes in a tooltip.
export function fmt(value, format) {
  if (value === null || value === undefined || value === '') { return '\u2014'; }
  if (typeof value === 'boolean') { return value ? 'yes' : 'no'; }
  if (Array.isArray(value)) { return value.length ? value.join(', ') : '\u2014'; }
  if (typeof value === 'number') {
    if (!isFinite(value)) { return '\u2014'; }
    if (format === 'pct') { return sig3(value * 100) + '%'; }
    if (format === 'usd') { return usd(value); }
    if (format === 'int' || (Number.isInteger(value) && format !== 'tps' && format !== 'ms')) {
      return grouped(Math.round(value));
    }
    return sig3(value);
  }
  if (typeof value === 'object') { return JSON.stringify(value); }
  return String(value);
}

// "1 row", "2,000 rows": a count with its noun.
export function plural(n, one, many) { return grouped(n) + ' ' + (n === 1 ? one : (many || one + 's')); }
