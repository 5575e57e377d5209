#!/usr/bin/python3
"""What a man page documents, as names: options and field/key names.

  man-inventory.py list PAGE
      prints one name a line: every option written \\-\\-name (or -x in a
      .B/.BR/.TP tag), and every bold word of a tag, .B/.BR/.I line or
      \\fB...\\fP run that looks like a field, key or metric name
      ([a-z_][a-z0-9_.]*).
  man-inventory.py diff OLD_PAGE NEW_PAGE [OTHER_DOC...]
      the names OLD_PAGE documents that neither NEW_PAGE nor any OTHER_DOC
      (a man page or Markdown file) mentions; exit 1 when there are any.
  man-inventory.py help PAGE PROGRAM [ARG...]
      runs PROGRAM ARG... (e.g. frctl --help, frctl dump --help; several
      runs separated by ::) and fails (exit 1) on every --option its
      output prints that PAGE does not document.

  man-inventory.py render PAGE [MAX_LINES]
      renders PAGE with man -l at 80 columns (and groff -ww): fails on any
      warning, and when it renders to more than MAX_LINES lines.

Regular expressions over roff as this tree writes it (\\-\\- for a dash,
.B/.BR/.I/.TP for names); a name written some other way is not seen.
"""
import os
import re
import subprocess
import sys

OPT = re.compile(r'(?:\\-|-){2}([a-z][a-z0-9-]*)')
NAME = re.compile(r'^[a-z_][a-z0-9_.]*$')
FONT = re.compile(r'\\f[BI](.*?)\\f[RP]')


def unescape(s):
    s = s.replace('\\-', '-').replace('\\(dq', '"').replace('\\&', '')
    s = s.replace('\\~', ' ').replace('\\ ', ' ')
    return re.sub(r'\\f[BIRP]', '', s)


def words(arg):
    out = []
    for w in re.findall(r'"[^"]*"|\S+', arg):
        w = unescape(w.strip('"'))
        for part in re.split(r'[\s,()\[\]|=:;]+', w):
            part = part.strip('."')
            if NAME.match(part) and len(part) > 1:
                out.append(part)
    return out


def inventory(path):
    names = set()
    text = open(path, encoding='utf-8').read().split('\n')
    for line in text:
        for m in OPT.finditer(unescape(line)):
            names.add('--' + m.group(1).rstrip('-'))
        if re.match(r'^\.(B|BR|RB|I|IR|BI|TP|IP)\b', line):
            macro, _, arg = line.partition(' ')
            if macro in ('.B', '.BR', '.RB', '.BI'):
                # in .BR/.RB the bold words alternate: keep every word, a
                # roman word that happens to look like a name is harmless
                names.update(words(arg))
        for m in FONT.finditer(line):
            names.update(words(m.group(1)))
    return names


def mentioned(names, docs):
    text = '\n'.join(unescape(open(d, encoding='utf-8').read()) for d in docs)
    missing = []
    for n in sorted(names):
        pat = re.escape(n)
        if not re.search(r'(?<![A-Za-z0-9_.-])' + pat + r'(?![A-Za-z0-9_-])', text):
            missing.append(n)
    return missing


def main(argv):
    if len(argv) >= 2 and argv[0] == 'list':
        print('\n'.join(sorted(inventory(argv[1]))))
        return 0
    if len(argv) >= 3 and argv[0] == 'diff':
        missing = mentioned(inventory(argv[1]), argv[2:])
        for n in missing:
            print(f'not documented any more: {n}')
        return 1 if missing else 0
    if len(argv) >= 3 and argv[0] == 'help':
        page, runs, cur = argv[1], [], []
        for a in argv[2:]:
            if a == '::':
                runs.append(cur)
                cur = []
            else:
                cur.append(a)
        runs.append(cur)
        opts = set()
        for cmd in runs:
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                print(f'{" ".join(cmd)} exited {p.returncode}: {p.stderr.strip()}')
                return 1
            opts.update('--' + m.group(1) for m in OPT.finditer(p.stdout + p.stderr))
        if not opts:
            print(f'no --option in the output of {runs}')
            return 1
        missing = mentioned(opts, [page])
        for n in missing:
            print(f'{page}: {n} is in --help but not in the page')
        print(f'{len(opts)} options of --help, {len(opts) - len(missing)} in {page}')
        return 1 if missing else 0
    if len(argv) in (2, 3) and argv[0] == 'render':
        page = argv[1]
        env = dict(os.environ, MANWIDTH='80', MAN_KEEP_FORMATTING='0')
        p = subprocess.run(['man', '--warnings', '-l', page], capture_output=True, text=True, env=env)
        g = subprocess.run(['groff', '-man', '-ww', '-z', page], capture_output=True, text=True)
        n = len(p.stdout.splitlines())
        bad = p.returncode != 0 or p.stderr.strip() or g.stderr.strip()
        for w in (p.stderr + g.stderr).strip().splitlines():
            print(f'{page}: {w}')
        print(f'{page}: {n} lines at 80 columns')
        if len(argv) == 3 and n > int(argv[2]):
            print(f'{page}: over {argv[2]} lines')
            bad = True
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
