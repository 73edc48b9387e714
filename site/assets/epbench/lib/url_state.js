/* A page's state in its address: every control is a parameter, a shared link opens the same
 * view, and each part of an address that cannot be applied is dropped and said on the page.
 *
 * addressState({defaults, checks, aliases}):
 *   defaults(state) -> every parameter with its default value (for `state`: a default may
 *     depend on another parameter's value); its keys, in order, are the page's parameters;
 *   checks[key](value, state) -> {value} to keep (with `notes`, sentences said beside it),
 *     or {why} to drop it ("key=value: why" is said); a key with no check keeps any value;
 *   aliases: old parameter names still read, {old: key}.
 */
import { el } from './dom.js';

// The check of an "include ..." flag: 1 keeps it, 0 or nothing clears it.
export function flag(key, what) {
  return function (v) {
    if (v === '1' || v === '0' || v === '') { return { value: v === '1' ? '1' : '' }; }
    return { why: 'use ' + key + '=1 to include ' + what + '; ignored.' };
  };
}

export function addressState(spec) {
  var aliases = spec.aliases || {};
  var typing = false;  // the last entry was pushed by typing (a search box)

  // The state the address asks for, and a sentence for each part that could not be applied.
  function read() {
    var params = new URLSearchParams(window.location.search);
    var state = spec.defaults({});
    var keys = Object.keys(state);
    var problems = [];
    var given = {};
    typing = false;
    params.forEach(function (value, key) {
      if (keys.indexOf(key) < 0 && !(key in aliases)) {
        problems.push('Unknown parameter \u201c' + key + '\u201d was ignored.');
      }
    });
    keys.forEach(function (key) {
      var name = params.has(key) ? key : Object.keys(aliases).filter(function (old) {
        return aliases[old] === key && params.has(old);
      })[0];
      if (!name) { return; }
      var v = params.get(name);
      var check = spec.checks[key];
      var got = check ? check(v, state) : { value: v };
      if (got.why) {
        problems.push(name + '=' + v + ': ' + got.why);
        return;
      }
      state[key] = got.value;
      given[key] = true;
      (got.notes || []).forEach(function (note) { problems.push(note); });
      var d = spec.defaults(state);  // defaults that follow this value
      keys.forEach(function (k) { if (!given[k]) { state[k] = d[k]; } });
    });
    return { state: state, problems: problems };
  }

  // The address of `state`: its parameters that are not their default ('' is never written).
  function query(state) {
    var d = spec.defaults(state);
    var params = new URLSearchParams();
    Object.keys(d).forEach(function (key) {
      var value = state[key];
      if (value !== undefined && value !== '' && value !== d[key]) { params.set(key, value); }
    });
    var text = params.toString();
    return text ? '?' + text : window.location.pathname;
  }

  // A new history entry for `state` when its address differs from the one shown; while the
  // reader types (`fromTyping`), each key replaces the entry the typing made.
  function commit(state, fromTyping) {
    var target = query(state);
    var search = target.charAt(0) === '?' ? target : '';
    if (search === (window.location.search || '')) { return; }
    if (fromTyping && typing) {
      history.replaceState(null, '', target);
    } else {
      history.pushState(null, '', target);
    }
    typing = !!fromTyping;
  }

  return { read: read, query: query, commit: commit };
}

// A visible list of the address parameters that could not be applied, each with why.
export function paramNotes(host, problems) {
  var box = document.getElementById('epb-param-notes');
  if (!box) {
    box = el('div', { 'class': 'epb-param-notes', id: 'epb-param-notes', role: 'status' });
    host.insertBefore(box, host.firstChild);
  }
  box.textContent = '';
  box.hidden = !problems.length;
  if (!problems.length) { return; }
  box.appendChild(el('p', { 'class': 'epb-param-title' }, problems.length === 1
    ? 'One part of the address could not be applied:' : problems.length + ' parts of the address could not be applied:'));
  var list = el('ul');
  problems.forEach(function (p) { list.appendChild(el('li', null, p)); });
  box.appendChild(list);
}
