#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""
No circles between the files of ctl/, lib/ and daemon/, and no long file
without a reason (issue 32).  A circle (a dispatcher that its callees
call back) makes the next change touch every file in it.

How: for each .c file, the functions it defines and every identifier it
names.  An edge A -> B when A names a function B defines (not static),
or when A includes "x.h" (beside it, or ../lib/) and x.h declares a
function that x.c defines.  ctl/ and daemon/ reach lib/, not each other
(frctl and flightrecd each link the library only), and a name a file
defines itself, static or not, is its own.  Every strongly connected
component of more than one file is a circle, printed with the edges
that make it and the names that make each edge.

A .c or .h file of ctl/, lib/ or daemon/ over 800 lines must say why at its top:
a sentence starting "Long because" in its first comment after the
licence line (e.g. "Long because the loader and its index are one state
machine: split, each would need the other's internals.").

Exit 1 with one line per problem, 0 and nothing printed when there are
none.  With --edges, prints every edge and the names that make it, to
see which functions a circle goes through.

Limits: regular expressions over this tree's style, not a C parser.
Comments, strings, character literals and (for definitions) preprocessor
lines are blanked out; a definition is a name, its parameters in
parentheses, then '{', at brace depth 0; "static" between the previous
';' or '}' and the name makes it local.  So: functions defined by
macros, or static inline in headers, are not seen; both branches of an
#if are read (braces unbalanced across them would confuse the depth); a
local variable or member named like another file's function makes an
edge (exported names here carry a prefix, so it does not happen); a
function reached only through a pointer is an edge where its name is
taken, not where it is called; tests/ and bpf/ are not looked at.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRS = ['ctl', 'lib', 'daemon']
# what each directory's files can call: frctl and flightrecd link the
# library, not each other
LINKED = {'ctl': {'ctl', 'lib'}, 'lib': {'lib'}, 'daemon': {'daemon', 'lib'}}
# where a file over LONG_LINES must say why at its top
LONG_DIRS = ['ctl', 'lib', 'daemon']
LONG_LINES = 800
LONG_MARKER = 'Long because'

IDENT = re.compile(r'[A-Za-z_]\w*')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a name and its parameters, then the body: at depth 0 only (checked below)
DEFINITION = re.compile(r'([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*\{', re.S)
KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'do', 'else', '__attribute__', 'typeof',
            '_Static_assert', 'defined'}


def blank(text, keep_preprocessor):
    """Comments, strings and character literals (and, unless kept,
    preprocessor lines) replaced by spaces; line breaks stay."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and not keep_preprocessor:
            j = i
            while j < n and text[j] in ' \t':
                j += 1
            if j < n and text[j] == '#':
                # the directive and its continuation lines
                while j < n and text[j] != '\n':
                    if text[j] == '\\' and j + 1 < n and text[j + 1] == '\n':
                        out.append(' ' * (j - i) + '\n')
                        i = j = j + 2
                        continue
                    j += 1
                out.append(' ' * (j - i))
                i = j
                continue
        line_start = False
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            if c == '\n':
                line_start = True
            i += 1
    return ''.join(out)


def depths(code):
    """The brace depth before each character."""
    d, r = 0, []
    for c in code:
        r.append(d)
        if c == '{':
            d += 1
        elif c == '}':
            d = max(d - 1, 0)
    return r


def definitions(code):
    """The functions defined in @code (preprocessor lines blanked): those
    not static, and all of them."""
    depth = depths(code)
    names, local = set(), set()
    for m in DEFINITION.finditer(code):
        name = m.group(1)
        if depth[m.start()] != 0 or name in KEYWORDS:
            continue
        # the declaration's start: after the previous ';' or '}' (or a
        # ')' of a previous attribute line does not matter)
        start = max(code.rfind(';', 0, m.start()), code.rfind('}', 0, m.start())) + 1
        head = code[start:m.start()]
        if '=' in head:
            continue
        local.add(name)
        # main: each program has its own
        if not re.search(r'\bstatic\b', head) and name != 'main':
            names.add(name)
    return names, local | names


def declarations(code):
    """Names of functions declared in a header (preprocessor lines blanked)."""
    return {m.group(1) for m in re.finditer(r'([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*'
                                            r'(?:__attribute__\s*\(\(.*?\)\)\s*)*;', code, re.S)
            if m.group(1) not in KEYWORDS}


def first_comment(text):
    """The first comment that is not the licence line."""
    for m in re.finditer(r'/\*.*?\*/', text, re.S):
        if 'SPDX-License-Identifier' not in m.group(0):
            return m.group(0)
    return ''


def main():
    show_edges = '--edges' in sys.argv[1:]
    files = {}
    for d in DIRS:
        p = os.path.join(ROOT, d)
        if not os.path.isdir(p):
            continue
        for name in sorted(os.listdir(p)):
            if name.endswith('.c'):
                files[f'{d}/{name}'] = open(os.path.join(p, name), encoding='utf-8').read()

    defined = {}  # file -> its functions
    own = {}      # file -> its functions, static ones too
    owner = {}    # function -> the files that define it
    for f, text in files.items():
        defined[f], own[f] = definitions(blank(text, keep_preprocessor=False))
        for name in defined[f]:
            owner.setdefault(name, set()).add(f)

    edges = {f: {} for f in files}  # file -> {file: names that make the edge}
    for f, text in files.items():
        used = set(IDENT.findall(blank(text, keep_preprocessor=True)))
        linked = LINKED[os.path.dirname(f)]
        for name in used - own[f]:
            for g in owner.get(name, ()):
                if os.path.dirname(g) in linked:
                    edges[f].setdefault(g, set()).add(name)
        d = os.path.dirname(f)
        for inc in INCLUDE.findall(text):
            h = os.path.normpath(os.path.join(d, inc))
            c = h[:-2] + '.c' if h.endswith('.h') else None
            if not c or c == f or c not in files or os.path.dirname(c) not in linked or not os.path.exists(os.path.join(ROOT, h)):
                continue
            hcode = blank(open(os.path.join(ROOT, h), encoding='utf-8').read(), keep_preprocessor=False)
            both = declarations(hcode) & defined[c]
            if both:
                edges[f].setdefault(c, set()).add(f'#include "{inc}"')

    if show_edges:
        for f in sorted(edges):
            for g in sorted(edges[f]):
                print(f'{f} -> {g}: {" ".join(sorted(edges[f][g]))}')

    problems = []
    # Tarjan's strongly connected components, iteratively
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []
    counter = [0]
    for root in sorted(files):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    for comp in sorted(sccs):
        inside = set(comp)
        why = '; '.join(f'{f} -> {g} ({", ".join(sorted(edges[f][g])[:3])}'
                        f'{", ..." if len(edges[f][g]) > 3 else ""})'
                        for f in comp for g in sorted(edges[f]) if g in inside)
        problems.append(f'circle of {len(comp)} files: {" ".join(comp)}: {why}')

    for d in LONG_DIRS:
        p = os.path.join(ROOT, d)
        if not os.path.isdir(p):
            continue
        for name in sorted(os.listdir(p)):
            if not name.endswith(('.c', '.h')):
                continue
            text = open(os.path.join(p, name), encoding='utf-8').read()
            n = text.count('\n')
            if n > LONG_LINES and LONG_MARKER not in ' '.join(first_comment(text).split()):
                problems.append(f'{d}/{name}: {n} lines, and its first comment does not say why '
                                f'("{LONG_MARKER} ...")')

    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
