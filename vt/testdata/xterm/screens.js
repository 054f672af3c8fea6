// Replays screens through xterm.js headless (@xterm/headless), the
// emulator of VS Code's terminal, for the differential tests in vt/.
//
//   node screens.js PREFIX < cases.json > screens.json
//
// PREFIX is the npm prefix @xterm/headless is installed under. Each case
// is {cols, rows, data} with data in base64; each screen is {rows, cx, cy}
// where rows[y][x] is [text, width] ("" and 0 in a wide character's right
// half).
'use strict';
const path = require('path');
const { Terminal } = require(path.join(process.argv[2], 'node_modules', '@xterm', 'headless'));

async function screen(c) {
  const term = new Terminal({ cols: c.cols, rows: c.rows, scrollback: 1000, allowProposedApi: true });
  await new Promise((resolve) => term.write(Buffer.from(c.data, 'base64'), resolve));
  const buf = term.buffer.active;
  const rows = [];
  const cell = buf.getNullCell();
  for (let y = 0; y < c.rows; y++) {
    const line = buf.getLine(buf.baseY + y);
    const row = [];
    for (let x = 0; x < c.cols; x++) {
      line.getCell(x, cell);
      const w = cell.getWidth();
      let text = cell.getChars();
      if (w === 0) text = '';
      else if (text === '') text = ' ';
      row.push([text, w]);
    }
    rows.push(row);
  }
  const out = { rows, cx: buf.cursorX, cy: buf.cursorY };
  term.dispose();
  return out;
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', async () => {
  const out = [];
  for (const c of JSON.parse(input)) out.push(await screen(c));
  process.stdout.write(JSON.stringify(out));
});
