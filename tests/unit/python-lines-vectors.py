# The lines CPython itself gives each instruction (code.co_lines()) of
# every code object of some of its standard library and of a source with
# unusual line steps, for test-python-lines: per code object a line
# "firstlineno hex(co_linetable)", then its lines, one per code unit
# (0: none).
import glob
import types

UNUSUAL = '''
def far_apart():
    a = 1



    b = [
        1,
        2,
    ]
''' + '\n' * 300 + '''
    return a + b[0]

def back():
    x = (1 +
         2) if True else (
         3)
    return x
'''

def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)

sources = [(UNUSUAL, '<unusual>')]
for path in sorted(glob.glob('/usr/lib/python3*/[a-f]*.py'))[:40]:
    with open(path, encoding='utf-8') as f:
        sources.append((f.read(), path))
for text, name in sources:
    try:
        top = compile(text, name, 'exec')
    except (SyntaxError, ValueError):
        continue
    for co in codes(top):
        units = len(co.co_code) // 2
        line = [0] * units
        for start, end, n in co.co_lines():
            for u in range(start // 2, min(end // 2, units)):
                line[u] = n or 0
        print(co.co_firstlineno, co.co_linetable.hex())
        print(' '.join(map(str, line)))
