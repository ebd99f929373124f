"""What the model reads of a page: a snapshot made in the page by one script, and the keys ``browser_press`` knows.

The snapshot lists, in document order, the headings and every visible element one can act on (links, buttons,
fields, selects, checkboxes, elements with a click handler or a tab stop), each with a ref (``@e3``) that the
script writes into the element (``data-hermes-ref``), so ``browser_click`` and ``browser_type`` find it again. The
refs of the last snapshot are the valid ones: each snapshot numbers the page anew. ``full`` adds the page's text."""

from __future__ import annotations

import re

REF_ATTRIBUTE = "data-hermes-ref"
MOST_ELEMENTS = 400  # listed of a page; a longer list says how many more there are

SNAPSHOT = r"""
const full = arguments[0], most = arguments[1];
const acting = 'a[href],button,input:not([type=hidden]),textarea,select,summary,[role=button],[role=link],' +
  '[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=textbox],' +
  '[role=combobox],[role=searchbox],[contenteditable=""],[contenteditable=true],[onclick],' +
  '[tabindex]:not([tabindex="-1"])';
document.querySelectorAll('[data-hermes-ref]').forEach(e => e.removeAttribute('data-hermes-ref'));
const shown = e => {
  const box = e.getBoundingClientRect(), style = getComputedStyle(e);
  return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
};
const clean = t => (t || '').replace(/\s+/g, ' ').trim().slice(0, 100);
const label = e => clean(e.getAttribute('aria-label') || (e.labels && e.labels[0] && e.labels[0].innerText) ||
  e.getAttribute('alt') || (e.tagName === 'INPUT' ? '' : e.innerText) || e.getAttribute('placeholder') ||
  e.getAttribute('title') || e.getAttribute('name') || (e.type === 'submit' ? e.value : ''));
const kinds = {A: 'link', BUTTON: 'button', TEXTAREA: 'textbox', SELECT: 'select', SUMMARY: 'button'};
const inputs = {checkbox: 'checkbox', radio: 'radio', submit: 'button', button: 'button', reset: 'button',
  range: 'slider', file: 'file'};
const kind = e => e.getAttribute('role') || kinds[e.tagName] ||
  (e.tagName === 'INPUT' ? inputs[e.type] || 'textbox' : e.isContentEditable ? 'textbox' : 'clickable');
const lines = [];
let count = 0;
const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_ELEMENT);
for (let e = walker.currentNode; e; e = walker.nextNode()) {
  if (/^H[1-6]$/.test(e.tagName) && shown(e)) { lines.push('#'.repeat(+e.tagName[1]) + ' ' + clean(e.innerText)); }
  if (!e.matches(acting) || !shown(e)) continue;
  count += 1;
  if (count > most) continue;
  const ref = 'e' + count, what = kind(e);
  e.setAttribute('data-hermes-ref', ref);
  let line = `[@${ref}] ${what} "${label(e)}"`;
  if (e.tagName === 'A') line += ' -> ' + clean(e.getAttribute('href'));
  if (what === 'checkbox' || what === 'radio') line += e.checked ? ' (checked)' : ' (not checked)';
  else if (e.tagName === 'SELECT') line += ' = ' + JSON.stringify(clean(e.selectedOptions[0] && e.selectedOptions[0].text)) +
    ' of ' + JSON.stringify(Array.from(e.options).slice(0, 20).map(o => clean(o.text)));
  else if ((e.tagName === 'INPUT' || e.tagName === 'TEXTAREA') && e.value && what === 'textbox')
    line += ' = ' + JSON.stringify(e.type === 'password' ? '(a password)' : clean(e.value));
  if (e.disabled) line += ' (disabled)';
  lines.push(line);
}
return {title: document.title, url: location.href, lines: lines, more: Math.max(count - most, 0),
        text: full && document.body ? document.body.innerText : ''};
"""

IMAGES = r"""
return Array.from(document.images).filter(i => i.naturalWidth > 0 && (i.currentSrc || i.src))
  .slice(0, arguments[0]).map(i => ({src: i.currentSrc || i.src, alt: i.alt || '', width: i.naturalWidth,
                                     height: i.naturalHeight}));
"""

# what browser_press takes (a key's name, any case) and the WebDriver key code it is (selenium's Keys)
KEYS = {"enter": "\ue007", "return": "\ue007", "tab": "\ue004", "escape": "\ue00c", "esc": "\ue00c",
        "backspace": "\ue003", "delete": "\ue017", "space": " ", "arrowup": "\ue013", "arrowdown": "\ue015",
        "arrowleft": "\ue012", "arrowright": "\ue014", "up": "\ue013", "down": "\ue015", "left": "\ue012",
        "right": "\ue014", "home": "\ue011", "end": "\ue010", "pageup": "\ue00e", "pagedown": "\ue00f"}


def key_code(name: str) -> str:
    """The key ``name`` names (``Enter``, ``ArrowDown``, a single character), or "" when it names none."""
    return KEYS.get(name.strip().lower().replace(" ", "").replace("_", ""), name if len(name) == 1 else "")


def ref_of(raw: str) -> str:
    """A ref as the model writes it (``@e5``, ``e5``, ``[@e5]``) as the page has it (``e5``); "" if it is none."""
    found = re.fullmatch(r"\[?@?(e\d+)\]?", raw.strip())
    return found.group(1) if found else ""


def shown(page: dict, text_limit: int) -> str:
    """A snapshot as the model reads it: the title, the address, the headings and elements, the text (``full``)."""
    from plugins.tool_args import clip

    head = [f"{page.get('title') or '(no title)'}", f"{page.get('url')}", ""]
    lines = list(page.get("lines") or []) or ["(nothing on this page to act on)"]
    if page.get("more"):
        lines.append(f"(and {page['more']} more elements: scroll, or read the page with full=true)")
    body = "\n".join(head + lines)
    if page.get("text"):
        body += "\n\n--- the page's text ---\n" + page["text"]
    return clip(body, text_limit)
