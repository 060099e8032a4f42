#!/bin/sh
# The `client` container's scripted scenario (compose.yaml; test/containers/ runs it too): real git and
# OpenSSH against the router, as the demo users, with the keys and known_hosts the init service wrote.
#   sh client-scenario.sh all          clone every demo project, push a branch, git archive --remote,
#                                      a clone that must be denied
#   sh client-scenario.sh push-big     push a branch `big` with one incompressible blob (BIG_MIB MiB)
#   sh client-scenario.sh slow-clone   clone branch `big`, reading at SLOW_BPS bytes/s (to be interrupted)
#   sh client-scenario.sh held-clone   clone my-company/my-project, its request held for HOLD_MS
#                                      after the first flush (to be interrupted between ls-refs and fetch)
#   sh client-scenario.sh clone P U    clone project P as user U once
#   sh client-scenario.sh push P U     clone project P as user U, push a new branch, print the remote's
#                                      messages (REMOTE lines); e.g. through a Geo secondary's SSH entry
# Every step prints one line the suite parses (CLONE / REF / PUSH / ARCHIVE / DENIED / FAIL) and the
# scenario ends with `scenario: <n> ok, <m> failed`; the exit code is 0 only when nothing failed.
set -u

ROUTER_SSH="${ROUTER_SSH:-router:2222}"
DATA_DIR="${DATA_DIR:-/data}"
WORK="$(mktemp -d /tmp/scenario.XXXXXX)"
STAMP="${SCENARIO_STAMP:-$(date +%s)-$$}"
ok=0
failed=0
export GIT_AUTHOR_NAME="Scenario Client" GIT_AUTHOR_EMAIL="client@cells.example"
export GIT_COMMITTER_NAME="Scenario Client" GIT_COMMITTER_EMAIL="client@cells.example"
export GIT_TERMINAL_PROMPT=0

url() { echo "ssh://git@${ROUTER_SSH}/$1.git"; }
# GIT_SSH_COMMAND for one demo user (no agent, no prompts, the router's known host key)
ssh_for() {
  echo "ssh -i ${DATA_DIR}/keys/$1 -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=${DATA_DIR}/known_hosts -o StrictHostKeyChecking=yes -o ConnectTimeout=10"
}
pass() { ok=$((ok + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL $*"
}
oneline() { tr '\n' ' ' <"$1" | cut -c1-400; }

# clone <project> <user>: clones, checks out main, prints every head of the clone
clone() {
  dir="$WORK/clone-$(echo "$1" | tr '/.' '__')-$2"
  if GIT_SSH_COMMAND="$(ssh_for "$2")" git clone --quiet "$(url "$1")" "$dir" 2>"$dir.err"; then
    main=$(git -C "$dir" rev-parse --verify -q refs/remotes/origin/main) || {
      fail "CLONE $1 $2: no main branch"
      return
    }
    echo "CLONE $1 $2 ok $main"
    git -C "$dir" for-each-ref --format="REF $1 %(refname) %(objectname)" refs/remotes/origin | grep -v 'origin/HEAD ' || true
    git -C "$dir" fsck --no-progress --connectivity-only >/dev/null 2>&1 || fail "CLONE $1 $2: fsck failed"
    pass
  else
    fail "CLONE $1 $2 exit $?: $(oneline "$dir.err")"
  fi
}

scenario_all() {
  # every demo project (stack/demo-topology.ts), as a user who may read it
  clone gitlab-org/gitlab-test bob
  clone gitlab-org/gitlab alice
  clone my-company/my-project alice
  clone my-company/my-other-project dave
  clone not-my-company/not-my-project root
  clone john.doe/notes john.doe
  clone acme.corp/www.site carol

  # push a new branch as alice (Developer of my-company/my-project)
  dir="$WORK/clone-my-company_my-project-alice"
  branch="scenario/$STAMP"
  if [ -d "$dir" ]; then
    echo "pushed from the client container at $STAMP" >"$dir/scenario.txt"
    git -C "$dir" add scenario.txt && git -C "$dir" commit --quiet -m "scenario $STAMP"
    sha=$(git -C "$dir" rev-parse HEAD)
    if GIT_SSH_COMMAND="$(ssh_for alice)" git -C "$dir" push --quiet origin "HEAD:refs/heads/$branch" 2>"$WORK/push.err"; then
      # read back through the router: the new ref is served
      remote=$(GIT_SSH_COMMAND="$(ssh_for alice)" git ls-remote "$(url my-company/my-project)" "refs/heads/$branch" | cut -f1)
      if [ "$remote" = "$sha" ]; then
        echo "PUSH my-company/my-project refs/heads/$branch $sha"
        pass
      else
        fail "PUSH my-company/my-project: ls-remote shows '$remote', pushed $sha"
      fi
    else
      fail "PUSH my-company/my-project exit $?: $(oneline "$WORK/push.err")"
    fi
  else
    fail "PUSH my-company/my-project: no clone to push from"
  fi

  # git archive --remote (upload-archive through the router)
  if GIT_SSH_COMMAND="$(ssh_for alice)" git archive --remote="$(url my-company/my-project)" --format=tar main >"$WORK/archive.tar" 2>"$WORK/archive.err"; then
    entries=$(tar -tf "$WORK/archive.tar" | wc -l)
    if [ "$entries" -gt 0 ] && tar -tf "$WORK/archive.tar" | grep -q '^README.md$'; then
      echo "ARCHIVE my-company/my-project main $entries"
      pass
    else
      fail "ARCHIVE my-company/my-project: $entries entries, no README.md"
    fi
  else
    fail "ARCHIVE my-company/my-project exit $?: $(oneline "$WORK/archive.err")"
  fi

  # a clone that must be denied: alice is no member of the private my-company/my-other-project
  if GIT_SSH_COMMAND="$(ssh_for alice)" git clone --quiet "$(url my-company/my-other-project)" "$WORK/denied" 2>"$WORK/denied.err"; then
    fail "DENIED my-company/my-other-project alice: the clone succeeded"
  elif grep -q "could not be found or you don't have permission" "$WORK/denied.err"; then
    echo "DENIED my-company/my-other-project alice $(grep -m1 'could not be found' "$WORK/denied.err")"
    pass
  else
    fail "DENIED my-company/my-other-project alice: unexpected error: $(oneline "$WORK/denied.err")"
  fi
}

# push <project> <user>: clone, commit, push a new branch `scenario/<stamp>` (ROUTER_SSH may be any SSH entry)
push_one() {
  clone "$1" "$2"
  dir="$WORK/clone-$(echo "$1" | tr '/.' '__')-$2"
  [ -d "$dir" ] || return
  branch="scenario/$STAMP"
  echo "pushed from the client container at $STAMP" >"$dir/scenario.txt"
  git -C "$dir" add scenario.txt && git -C "$dir" commit --quiet -m "scenario $STAMP"
  sha=$(git -C "$dir" rev-parse HEAD)
  if GIT_SSH_COMMAND="$(ssh_for "$2")" git -C "$dir" push origin "HEAD:refs/heads/$branch" 2>"$WORK/push.err"; then
    sed -n 's/^remote: /REMOTE /p' "$WORK/push.err"
    echo "PUSH $1 refs/heads/$branch $sha"
    pass
  else
    fail "PUSH $1 exit $?: $(oneline "$WORK/push.err")"
  fi
}

# push-big: a branch `big` in my-company/my-project with one incompressible blob, as alice
push_big() {
  mib="${BIG_MIB:-32}"
  dir="$WORK/big"
  GIT_SSH_COMMAND="$(ssh_for alice)" git clone --quiet "$(url my-company/my-project)" "$dir" 2>"$WORK/big.err" || {
    fail "PUSH big: clone exit $?: $(oneline "$WORK/big.err")"
    return
  }
  head -c "$((mib * 1024 * 1024))" /dev/urandom >"$dir/big.bin"
  git -C "$dir" -c core.bigFileThreshold=1m add big.bin && git -C "$dir" commit --quiet -m "big blob"
  sha=$(git -C "$dir" rev-parse HEAD)
  if GIT_SSH_COMMAND="$(ssh_for alice)" git -C "$dir" push --quiet origin HEAD:refs/heads/big 2>"$WORK/big.err"; then
    echo "PUSH my-company/my-project refs/heads/big $sha"
    pass
  else
    fail "PUSH big exit $?: $(oneline "$WORK/big.err")"
  fi
}

# slow-clone: clone branch `big`, reading ssh's output at SLOW_BPS bytes/s; prints READ <bytes> as it goes
slow_clone() {
  cat >"$WORK/slow.mjs" <<'EOF'
import { spawn } from 'node:child_process';
const rate = Number(process.env.SLOW_BPS || 262144);
const child = spawn(process.argv[2], process.argv.slice(3), { stdio: ['inherit', 'pipe', 'inherit'] });
let read = 0;
let reported = 0;
child.stdout.on('data', (chunk) => {
  child.stdout.pause();
  process.stdout.write(chunk);
  read += chunk.length;
  if (read - reported >= 262144) {
    reported = read;
    process.stderr.write(`READ ${read}\n`);
  }
  setTimeout(() => child.stdout.resume(), (chunk.length / rate) * 1000);
});
child.on('exit', (code, signal) => {
  process.stderr.write(`SSH EXIT ${code ?? signal} after ${read} bytes\n`);
  process.exitCode = code ?? 255;
});
EOF
  export SLOW_BPS="${SLOW_BPS:-262144}"
  GIT_SSH_COMMAND="node $WORK/slow.mjs $(ssh_for alice)" \
    git clone --progress --single-branch --branch big "$(url my-company/my-project)" "$WORK/slow"
  code=$?
  echo "SLOW-CLONE exit $code"
  return "$code"
}

# held-clone: clone my-company/my-project, holding the client's request after its first flush packet
# (protocol v2: after ls-refs, before fetch) for HOLD_MS; prints HOLDING while the clone is open but waits
held_clone() {
  cat >"$WORK/hold.mjs" <<'EOF'
import { spawn } from 'node:child_process';
const holdMs = Number(process.env.HOLD_MS || 60000);
const child = spawn(process.argv[2], process.argv.slice(3), { stdio: ['pipe', 'inherit', 'inherit'] });
let pending = Buffer.alloc(0);
let holding = false;
const held = [];
process.stdin.on('data', (chunk) => {
  if (holding) return void held.push(chunk);
  pending = Buffer.concat([pending, chunk]);
  let at = 0;
  while (at + 4 <= pending.length) {
    const len = Number.parseInt(pending.subarray(at, at + 4).toString('latin1'), 16);
    const size = len < 4 ? 4 : len;
    if (at + size > pending.length) break;
    at += size;
    if (len === 0) {
      holding = true;
      break;
    }
  }
  if (!holding) return;
  child.stdin.write(pending.subarray(0, at));
  held.push(pending.subarray(at));
  pending = Buffer.alloc(0);
  process.stderr.write('HOLDING\n');
  setTimeout(() => {
    for (const c of held) child.stdin.write(c);
    holding = false;
  }, holdMs);
});
process.stdin.on('end', () => child.stdin.end());
child.stdin.on('error', () => undefined);
child.on('exit', (code, signal) => {
  process.stderr.write(`SSH EXIT ${code ?? signal}\n`);
  process.exit(code ?? 255);
});
EOF
  GIT_SSH_COMMAND="node $WORK/hold.mjs $(ssh_for alice)" \
    git clone "$(url my-company/my-project)" "$WORK/held"
  code=$?
  echo "HELD-CLONE exit $code"
  return "$code"
}

case "${1:-all}" in
  all) scenario_all ;;
  push-big) push_big ;;
  slow-clone)
    slow_clone
    exit $?
    ;;
  held-clone)
    held_clone
    exit $?
    ;;
  clone) clone "$2" "$3" ;;
  push) push_one "$2" "$3" ;;
  *)
    echo "usage: $0 all|push-big|slow-clone|held-clone|clone <project> <user>|push <project> <user>" >&2
    exit 2
    ;;
esac
rm -rf "$WORK"
echo "scenario: $ok ok, $failed failed"
[ "$failed" -eq 0 ]
