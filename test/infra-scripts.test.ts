// The infra/ scripts' process check. A start script records `$!` and polls it while the service boots;
// the check must see a child that has not yet exec'd its program as alive (the race that once made
// `kafka/start.sh` report an exit with an empty log) and an exited, unreaped child as gone.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const lib = fileURLToPath(new URL('../infra/lib.sh', import.meta.url));

function bash(script: string): string {
  return execFileSync('bash', ['-c', `set -euo pipefail; . "${lib}"; ${script}`], {
    encoding: 'utf8',
    env: { ...process.env, TALLY_INFRA_HOME: '/tmp/tally-infra-test' },
  }).trim();
}

describe('infra/lib.sh alive', () => {
  it('sees a running child as alive', () => {
    expect(bash('sleep 5 & p=$!; alive $p && echo yes || echo no; kill $p')).toBe('yes');
  });

  it("sees a forked child that has not exec'd yet as alive", () => {
    // The subshell is the forked child; it runs alive on itself before exec'ing anything.
    expect(bash('(alive $BASHPID && echo yes || echo no)')).toBe('yes');
  });

  it('sees an exited child as gone, also while it is an unreaped zombie', () => {
    // exec makes the child a process whose parent (python) never reaps it: a zombie for a while.
    const out = execFileSync(
      'python3',
      [
        '-c',
        `import subprocess, time, os
p = subprocess.Popen(["true"])
deadline = time.monotonic() + 10
while True:
    state = open(f"/proc/{p.pid}/stat").read().rsplit(") ", 1)[1].split()[0]
    if state == "Z" or time.monotonic() > deadline: break
    time.sleep(0.01)
r = subprocess.run(["bash", "-c", f'. "${lib}"; alive {p.pid} && echo alive || echo gone'], capture_output=True, text=True)
print(state, r.stdout.strip())
p.wait()
r = subprocess.run(["bash", "-c", f'. "${lib}"; alive {p.pid} && echo alive || echo gone'], capture_output=True, text=True)
print(r.stdout.strip())`,
      ],
      { encoding: 'utf8', env: { ...process.env, TALLY_INFRA_HOME: '/tmp/tally-infra-test' } },
    ).trim();
    expect(out.split('\n')).toEqual(['Z gone', 'gone']);
  });
});
