#!/usr/bin/python3
"""zshcomp.py FPATH_DIR LINE... - drives zsh's completion for real: for each
LINE, starts an interactive zsh in a pseudo-terminal with compinit and the
completion functions of FPATH_DIR, types LINE and a Tab, and prints every
candidate the completion system added, as "LINE<tab>candidate" lines.
compadd is wrapped so that the candidates it adds are also written to a
file; nothing else about zsh's completion is changed.  Standard library
only."""
import os
import pty
import select
import shutil
import sys
import tempfile
import time

ZSHRC = r'''
fpath=({fdir} $fpath)
autoload -U compinit && compinit -u -d {tmp}/zcompdump
zstyle ':completion:*' menu no
compadd() {{
	local -a __hits
	# calls that only ask (-O -A -D) pass through
	if [[ ${{@[(I)-[OAD]*]}} -gt 0 ]]; then builtin compadd "$@"; return; fi
	builtin compadd -A __hits "$@"
	print -rl -- $__hits >> {hits}
	builtin compadd "$@"
}}
PS1='READY> '
'''


def complete(line, env, hits, timeout=20.0):
    if os.path.exists(hits):
        os.unlink(hits)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe('zsh', ['zsh', '-i'], env)
    buf = b''

    def read_until(done, limit):
        nonlocal buf
        end = time.time() + limit
        while time.time() < end and not done():
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    buf += os.read(fd, 65536)
                except OSError:
                    break

    read_until(lambda: b'READY> ' in buf, timeout)
    os.write(fd, line.encode() + b'\t')
    state = {'size': None, 'since': time.time()}

    def settled():
        # the candidates are in once the file stops growing for a while
        size = os.path.getsize(hits) if os.path.exists(hits) else -1
        if size != state['size']:
            state['size'], state['since'] = size, time.time()
        return size >= 0 and time.time() - state['since'] > 0.5

    read_until(settled, timeout)
    os.write(fd, b'\x03exit\n')
    read_until(lambda: False, 0.2)
    os.close(fd)
    os.waitpid(pid, 0)
    if not os.path.exists(hits):
        return []
    with open(hits) as f:
        return [h for h in f.read().split('\n') if h]


def main():
    if len(sys.argv) < 3:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    fdir, lines = os.path.abspath(sys.argv[1]), sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix='tcx-zsh.')
    try:
        hits = os.path.join(tmp, 'hits')
        with open(os.path.join(tmp, '.zshrc'), 'w') as f:
            f.write(ZSHRC.format(fdir=fdir, tmp=tmp, hits=hits))
        env = dict(os.environ, ZDOTDIR=tmp, TERM='dumb', HOME=tmp)
        for line in lines:
            for h in complete(line, env, hits):
                print(f'{line}\t{h}')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
