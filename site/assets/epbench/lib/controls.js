/* The forms above the boards and the buyer pages' tables: labelled fields, selects, "Include
 * ..." flags, each bound to one address parameter, and kept in step with the page's state. */
import { el } from './dom.js';

// A form of controls that never submits (each control applies itself on change).
export function controlForm(className, label) {
  var form = el('form', { 'class': className, role: 'search', 'aria-label': label });
  form.addEventListener('submit', function (e) { e.preventDefault(); });
  return form;
}

// `control` under its label, with the id the label points at.
export function field(labelText, control, id) {
  var wrap = el('div', { 'class': 'epb-field' });
  control.id = id;
  wrap.appendChild(el('label', { 'for': id }, labelText));
  wrap.appendChild(control);
  return wrap;
}

// A select named `name` offering `options` ([value, label] pairs), calling `onChange(value)`.
export function select(name, options, onChange) {
  var box = el('select', { name: name });
  options.forEach(function (pair) {
    var option = el('option', null, pair[1]);
    option.value = pair[0];
    box.appendChild(option);
  });
  box.addEventListener('change', function () { onChange(box.value); });
  return box;
}

/* A labelled checkbox bound to one URL flag ('1' when ticked, '' when not), as the boards'
 * and the buyer pages' "Include ..." controls are: appended to `form`, kept in
 * `controls[name]`, and `update(name, value)` called on every change. */
export function flagBox(form, controls, update, name, id, label) {
  var box = el('input', { type: 'checkbox', name: name, id: id });
  box.addEventListener('change', function () { update(name, box.checked ? '1' : ''); });
  controls[name] = box;
  var wrap = el('div', { 'class': 'epb-field epb-check' });
  wrap.appendChild(box);
  wrap.appendChild(el('label', { 'for': id }, label));
  form.appendChild(wrap);
  return box;
}

// Every control (`controls`, parameter -> element) shows `state`: a flag ticked for '1', a
// select on its value (an option added when a shared link names a value not in the data).
export function syncControls(controls, state) {
  Object.keys(controls).forEach(function (key) {
    var control = controls[key];
    if (control.type === 'checkbox') { control.checked = state[key] === '1'; return; }
    if (control.tagName === 'SELECT' && state[key] != null && state[key] !== '' &&
        !Array.prototype.some.call(control.options, function (o) { return o.value === state[key]; })) {
      var option = el('option', null, state[key]);
      option.value = state[key];
      control.appendChild(option);
    }
    control.value = state[key];
  });
}
