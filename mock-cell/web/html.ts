/** Minimal Rails-shaped HTML: one layout whose `<body>` names the page (`data-page`) and the cell. */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function esc(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

export interface Layout {
  title: string;
  /** GitLab's `data-page`, e.g. `projects:show`. */
  page: string;
  cell: string;
  /** Already-escaped inner HTML. */
  body: string;
}

export function layout({ title, page, cell, body }: Layout): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    `<head><meta charset="utf-8"><title>${esc(title)} · GitLab</title></head>`,
    `<body data-page="${esc(page)}" data-cell="${esc(cell)}">`,
    body,
    `<footer>Served by ${esc(cell)}</footer>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

export function list(items: readonly string[]): string {
  return items.length === 0
    ? '<p>Nothing here.</p>'
    : `<ul>\n${items.map((i) => `<li>${i}</li>`).join('\n')}\n</ul>`;
}
