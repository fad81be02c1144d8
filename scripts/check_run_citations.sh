#!/usr/bin/env bash
# Every run record a figure cites must exist: in README.md, docs/*.md and the sources (or the files
# named as arguments), each citation ARCHIVE.tar.xz:member (docs/runs/DATE/callNN-name.tar.xz:path, or the
# archive's name alone where the text is about one day's runs) must name an archive under
# docs/runs/ and a member in it (globs such as tune-*.txt, {1,2} and a trailing '-' match some
# member), and every other docs/runs/ path or callNN-name/ folder must exist as a file. Exits 1
# and lists each missing citation; prints the count checked on success. See docs/runs/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# Default: the docs, and the comments of every source, test, bench and template file.
if [ $# -eq 0 ]; then
  mapfile -t sources < <(git ls-files src tests python bench kernel_templates | grep -E '\.(cpp|hpp|py|txt|cu|cuh|md)$')
  set -- README.md docs/*.md "${sources[@]}"
fi
exec python3 - "$@" <<'PY'
import fnmatch, glob, os, re, sys, tarfile
archives = {}                      # stem -> [path]
for a in glob.glob('docs/runs/*/*.tar.xz'):
    archives.setdefault(os.path.basename(a)[:-len('.tar.xz')], []).append(a)
members = {}
def names(a):
    if a not in members:
        with tarfile.open(a) as t:
            members[a] = [m.name for m in t.getmembers()]
    return members[a]
def braces(p):                     # a{1,2}b -> [a1b, a2b]
    m = re.search(r'\{([^{}]*)\}', p)
    return [q for alt in m.group(1).split(',') for q in braces(p[:m.start()] + alt + p[m.end():])] if m else [p]
def found(a, mem):
    mem = re.sub(r'<[^>]*>', '*', mem.rstrip('/'))
    for pat in braces(mem):
        if pat.endswith('-'): pat += '*'
        if any(fnmatch.fnmatchcase(n.rstrip('/'), pat) for n in names(a)): return True
    return False
MEM = r'(?:[\w.*?<>+/-]|\{[^}\s`]*\})+'
cite = re.compile(r'(?P<pre>(?:docs/runs/)?(?:20\d\d-\d\d-\d\d/)?)(?P<stem>[\w-]+)\.tar\.xz(?::(?P<mem>' + MEM + '))?')
loose = re.compile(r'docs/runs/[\w./-]*[\w/]')
folder = re.compile(r'(?<![\w/.-])call\d+-[a-z0-9-]*[a-z0-9]/')
bad, n = [], 0
for path in sys.argv[1:]:
    for ln, line in enumerate(open(path, encoding='utf-8'), 1):
        line = re.sub(r'\S*(DATE|callNN|ARCHIVE)\S*', '', line)  # the naming rule's placeholders
        for m in cite.finditer(line):
            n += 1
            date = re.search(r'20\d\d-\d\d-\d\d', m.group('pre'))
            cands = [a for a in archives.get(m.group('stem'), []) if not date or f'/{date.group(0)}/' in a]
            if len(cands) != 1:
                bad.append(f'{path}:{ln}: {m.group(0)}: ' + ('no such archive' if not cands else 'archive name is ambiguous: give its date'))
            elif m.group('mem') and not found(cands[0], m.group('mem')):
                bad.append(f'{path}:{ln}: {m.group(0)}: no member {m.group("mem")} in {cands[0]}')
        rest = cite.sub('', line)
        for m in loose.finditer(rest):
            n += 1
            if not os.path.exists(m.group(0)):
                bad.append(f'{path}:{ln}: {m.group(0)}: no such file (an archived call is cited as ARCHIVE.tar.xz:member)')
        for m in folder.finditer(rest):
            n += 1
            bad.append(f'{path}:{ln}: {m.group(0)}: a call folder (cite callNN-name.tar.xz:member)')
print('\n'.join(bad) if bad else f'check_run_citations: {n} citations, all found')
sys.exit(1 if bad else 0)
PY
