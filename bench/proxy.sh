#!/usr/bin/env bash
# bench/proxy.sh: what sbx's filtering proxy costs a connection, measured
# against a direct connection and against srt's proxy
# (@anthropic-ai/sandbox-runtime 0.0.81, installed in bench/.srt as
# bench/overhead.sh does).
#
# It is a benchmark, not a test: it prints figures and exits 0 (1 only when
# the namespace or the direct baseline could not be set up at all). It needs
# root (a network namespace and a private /etc/hosts); without root it says so
# and exits 0.
#
# The set-up, as net_up in test.sh: a network namespace sbxpN with a veth,
# 10.200.N.1 on this host and 10.200.N.2 inside, where bench/proxy_load.c
# (built into a scratch directory) serves three ports:
#     8000  HTTP: a 13-byte 200 answer, Connection: close, the server closes;
#     8001  HTTP: a 200 whose body is 1 GiB of zeros (BULK_MIB);
#     8002  a line echo.
# The proxies must reach it by name (both refuse names that resolve to
# loopback or to this host's addresses), so every sandbox runs under
# `unshare -m` with a private hosts file bound over /etc/hosts, naming
# 10.200.N.2 allowed.test. Only loopback and 10.200.N.2 are ever contacted,
# and no DNS lookup happens (the proxies read the hosts file; nsswitch has
# `files` first).
#
# Three columns, the same client binary in each:
#   direct  the client on this host, talking to 10.200.N.2 itself;
#   sbx     the client inside `sbx -c P --`, P = "allow-write ." +
#           "allow-domain allowed.test": through 127.0.0.1:3128, the
#           listener bwrap's network namespace holds, served by the proxy
#           process sbx forks on the host side;
#   srt     the client inside `srt --settings F -c CMD`, F = srt's equivalent
#           settings: through srt's in-sandbox socat on 3128, a unix socket,
#           a host-side socat, and srt's node proxy. srt requires the
#           per-run credential it puts in HTTP_PROXY's userinfo (407
#           without); the client sends it as Proxy-Authorization, as curl does.
#   The proxy client finds its proxy in $HTTP_PROXY, as curl does.
# And a fourth column, the relay floor: what any user-space proxy costs here,
# no sandbox, no policy. For the bulk row the client on this host through
# `socat -b 262144` (a plain TCP relay) to the bulk port: any proxy carries
# each byte through the kernel's TCP stack twice. For the request rows and
# CONNECT latency the client on this host through `proxy_load relay`, a
# minimal forwarding proxy (one thread, epoll; it knows allowed.test from
# its command line, no lookup, no decision), speaking what the client sends
# through sbx: an absolute-form GET or a CONNECT. Any proxy makes two TCP
# connections per request, on the same 2 CPUs as client and server; sbx's
# ratio to that floor is printed beside its ratio to direct.
# With CMP_BIN, one more column, "cmp": a second sbx binary (one built
# before a change), run exactly as the sbx column, interleaved with it.
#
# What one run measures:
#   1. bulk: one 1 GiB stream, MB/s. The client CONNECTs (proxies), sends
#      GET /, reads the body to EOF in 256 KiB reads; median of BULK_RUNS
#      runs, the three columns interleaved run by run (the machine's drift
#      falls on all of them). A stream that ends early is kept (its rate is
#      still a rate) and noted. Also one run of
#      `curl -s -o /dev/null -w %{speed_download}` (-p through the proxies),
#      to show the client is not the limit.
#   2. requests/s: SEQ_N sequential requests, then PAR_N requests over PAR_C
#      parallel clients; a new connection per request (no keep-alive); through
#      the proxies each is an absolute-URI GET http://allowed.test:8000/ sent
#      to 127.0.0.1:3128.
#   3. CONNECT latency: HS_N sequential CONNECTs to allowed.test:8002, each
#      timed from connect() to the end of the "200 Connection Established"
#      head; p50 and p99. The direct column is a bare TCP connect().
#   Rows 2 and 3 run REQ_RUNS rounds (default 1), each round every column in
#   turn (sequential, then 64 clients, then CONNECT), and report the median
#   of each column over the rounds, each round's figures, and the median of
#   the per-round ratios (on a shared machine the columns of one round drift
#   together). Every connection leaves a TIME_WAIT on this host, and once
#   tens of thousands wait, connect(2) spends long in the search for a free
#   port (hundreds of us, the direct column's too): with many rounds, take
#   SEQ_N, PAR_N and HS_N down (3000, 3000, 500 for REQ_RUNS=7).
#   4. proxy memory with TUNNELS open tunnels: after one request (sbx forks
#      its proxy on the first connection), the client opens them
#      (CONNECT to the echo server, one round trip each) and holds them while
#      this script reads VmRSS (and VmHWM) of sbx's proxy process — the child
#      of sbx that is not bwrap — idle before, and with every tunnel open;
#      then each tunnel is checked again. For srt the same figures of its node
#      process (its proxy), plus the count and total Pss of its socat
#      processes (it forks two per connection).
#   5. through a parent proxy: rows 1-3 again (bulk, requests/s, CONNECT
#      latency) in two more columns: "parent", the client straight to a
#      parent proxy, and "sbx>parent", the client inside sbx whose policy
#      says `parent-proxy` that parent, so every request crosses sbx's proxy
#      and then the parent. The parent is a second sbx's proxy (fast, so the
#      row measures sbx, not the parent): `sbx -c P -- sleep`, whose
#      listener 127.0.0.1:3128 exists only in that sandbox's network
#      namespace; both columns run there (nsenter --net), where nothing but
#      that listener is reachable. The ratio is sbx>parent / parent.
#   6. network-capture against the CONNECT path: rows 1-2 (bulk, requests/s)
#      in two more columns, both the client inside sbx: "CONNECT", a CONNECT
#      tunnel through 127.0.0.1:3128 for each request, then GET / in it; and
#      "capture", a policy with network-capture on (and /etc/hosts hidden
#      inside, so the name goes to the DNS stub): the client resolves
#      allowed.test once, gets a capture address and connects there as a
#      program that ignores HTTP_PROXY would. The ratio is capture / CONNECT.
# Then a table (sbx/direct and sbx/srt ratios) and a summary against the
# targets: bulk >= 90% of direct and >= 3x srt; requests/s >= 5x srt (both
# rows); proxy RSS with 1000 tunnels <= 40 MiB.
#
# Everything measured (server, clients, sandboxes and so their proxies) runs
# under `nice -n $NICE` (default -5, root only), equally, so the rest of the
# machine (2 cores here) disturbs it less. Every loop is bounded, every run
# is under `timeout` (the tunnel runs: bounded waits, then a kill), a full run
# takes about 5 minutes; a trap kills the server and sandboxes this script
# started (by pid) and removes the namespace, the veth and the scratch
# directory.
#
# Run:   bench/proxy.sh   (as root; sbx is ../sbx, built with make if missing)
# Knobs: BULK_MIB=1024 BULK_RUNS=5 SEQ_N=10000 PAR_N=10000 PAR_C=64 HS_N=2000
#        REQ_RUNS=1 TUNNELS=1000 NICE=-5 NO_SRT=1 (skip the srt column) NO_CURL=1
#        SRT_BIN=path (an srt 0.0.81 already installed, instead of bench/.srt's)
#        SBX_BIN=path (another sbx binary, e.g. a copy built before a change)
#        CMP_BIN=path (a second sbx binary, measured as the "cmp" column
#        beside sbx in rows 1-3: before and after in one run)
#        SBX_POLICY_EXTRA='line\nline' (lines appended to the policy of the sbx
#        and cmp columns, e.g. "observe-writes off"; printf's escapes)
#        NO_PARENT=1 (skip section 5)  NO_CAPTURE=1 (skip section 6)
#        NO_BULK=1 (skip section 1)  NO_TUNNELS=1 (skip section 4): with all
#        four NO_ knobs only requests/s and CONNECT latency run (a minute)
# Needs: ip (iproute2), unshare, mount, bwrap, cc, curl; nsenter for section 5;
#        for srt: node, socat and rg (srt checks for them).

set -u -o pipefail

BULK_MIB=${BULK_MIB:-1024}
BULK_RUNS=${BULK_RUNS:-5}
[ -n "${NO_BULK:-}" ] && BULK_RUNS=0 NO_CURL=1
SEQ_N=${SEQ_N:-10000}
REQ_RUNS=${REQ_RUNS:-1}
PAR_N=${PAR_N:-10000}
PAR_C=${PAR_C:-64}
HS_N=${HS_N:-2000}
TUNNELS=${TUNNELS:-1000}
NICE=${NICE:--5}
SRT_VERSION=0.0.81

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SBX=${SBX_BIN:-$ROOT/sbx}
CMP=${CMP_BIN:-}
SRT=${SRT_BIN:-$HERE/.srt/node_modules/.bin/srt}

say() { printf '%s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
NOTES=()
note() { NOTES+=("$*"); say "note: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
	say "bench/proxy.sh needs root: it creates a network namespace for the test server and binds a private /etc/hosts (unshare -m); nothing measured."
	exit 0
fi
for t in ip unshare mount bwrap cc curl timeout; do
	if ! have "$t"; then
		say "bench/proxy.sh needs $t (not installed); nothing measured."
		exit 0
	fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbx-proxy-bench.XXXXXX") || exit 1
PROJ=$WORK/project	# the sandboxes' working directory (allow-write .)
M=$WORK/m		# per-run output
mkdir -p "$PROJ" "$M"
PL=$WORK/proxy_load
NS=
NET_N=
PIDS=()			# background processes this script started

# forget PID: it has been waited for; the trap must not signal a reused pid
forget() {
	local p keep=()
	for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		# bounded: a process that ignores TERM gets KILL after ~2 s
		for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "$NS" ]; then
		ip netns del "$NS" 2>/dev/null
		ip link del "${NS}h" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build ----------------------------------------------------------------

if [ ! -x "$SBX" ]; then
	say "building sbx: make -C $ROOT -s" >&2
	make -C "$ROOT" -s sbx >&2 || { say "sbx is missing and could not be built"; exit 1; }
fi
[ -z "${SBX_BIN:-}" ] && [ "$ROOT/sbx.c" -nt "$SBX" ] && note "sbx is older than sbx.c: measuring the old binary (run make first)"
if [ -n "$CMP" ] && [ ! -x "$CMP" ]; then
	say "CMP_BIN=$CMP is not an executable"
	exit 1
fi
if ! cc -O2 -Wall -pthread -o "$PL" "$HERE/proxy_load.c" 2>"$M/cc.err"; then
	say "cannot build bench/proxy_load.c: $(head -c 300 "$M/cc.err")"
	exit 1
fi
NICE_CMD=(nice -n "$NICE")
"${NICE_CMD[@]}" true 2>/dev/null || { note "nice -n $NICE refused: running at normal priority"; NICE_CMD=(); }

# ---- the namespace and its servers (as net_up in test.sh) -----------------------

NET_N=$(( ($$ + RANDOM) % 200 + 20 ))
NS=sbxp$NET_N
NSIP=10.200.$NET_N.2
if ! ip netns add "$NS" 2>"$M/ns.err"; then
	NS=
	say "cannot create a network namespace: $(cat "$M/ns.err"); nothing measured."
	exit 0
fi
if ! { ip link add "${NS}h" type veth peer name "${NS}n" && ip link set "${NS}n" netns "$NS" &&
	ip addr add "10.200.$NET_N.1/24" dev "${NS}h" && ip link set "${NS}h" up &&
	ip netns exec "$NS" ip addr add "$NSIP/24" dev "${NS}n" && ip netns exec "$NS" ip link set "${NS}n" up &&
	ip netns exec "$NS" ip link set lo up; } 2>"$M/ns.err"; then
	say "cannot wire the namespace: $(cat "$M/ns.err")"
	exit 1
fi
BULK_BYTES=$((BULK_MIB * 1024 * 1024))
ip netns exec "$NS" "${NICE_CMD[@]}" "$PL" serve "$NSIP" 8000 8001 8002 "$BULK_BYTES" >"$M/server.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do curl -s -m 1 "http://$NSIP:8000/" >/dev/null 2>&1 && break; sleep 0.1; done
if [ "$(curl -s -m 2 "http://$NSIP:8000/")" != "hello, world" ]; then
	say "the namespace's server did not start: $(head -c 300 "$M/server.out")"
	exit 1
fi
# the relay floor: a plain user-space TCP relay (socat, 256 KiB buffers) on this host in
# front of the bulk port. Any proxy pays what it pays: a second TCP connection (client to
# relay) whose bytes the kernel carries once more, on the same 2 CPUs as client and server.
RELAY_PORT=18001
RELAY_OK=0
if have socat; then
	"${NICE_CMD[@]}" socat -b 262144 "TCP-LISTEN:$RELAY_PORT,bind=127.0.0.1,fork,reuseaddr" "TCP:$NSIP:8001" 2>"$M/relay.err" &
	PIDS+=($!)
	for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$RELAY_PORT") 2>/dev/null && { RELAY_OK=1; break; }; sleep 0.1; done
fi
# the relay floor of the request rows: a minimal forwarding proxy (proxy_load relay) on this
# host, which knows allowed.test from its command line
RPROXY_PORT=18002
"${NICE_CMD[@]}" "$PL" relay 127.0.0.1 "$RPROXY_PORT" "allowed.test=$NSIP" >"$M/rproxy.out" 2>&1 &
PIDS+=($!)
FLOOR_OK=0
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$RPROXY_PORT") 2>/dev/null && { FLOOR_OK=1; break; }; sleep 0.1; done
HOSTS=$WORK/hosts
printf '127.0.0.1 localhost\n%s allowed.test\n' "$NSIP" >"$HOSTS"
POLICY=$WORK/policy
printf 'allow-write .\nallow-domain allowed.test\n' >"$POLICY"
# shellcheck disable=SC2059	# the knob's escapes (\n) are meant
[ -n "${SBX_POLICY_EXTRA:-}" ] && printf "${SBX_POLICY_EXTRA}\n" >>"$POLICY"
SRT_JSON=$WORK/srt.json
printf '%s\n' '{"network":{"allowedDomains":["allowed.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}' >"$SRT_JSON"

# ---- running a client in each column ------------------------------------------------

# target MODE PORT: the client's TARGET argument
target() { if [ "$1" = relay ]; then printf 'direct:127.0.0.1:%s' "$RELAY_PORT"; elif [ "$1" = direct ]; then printf 'direct:%s:%s' "$NSIP" "$2"; else printf 'proxy:allowed.test:%s' "$2"; fi; }

# launch MODE SECS CMD...: exec CMD in MODE's column (in a subshell). SECS > 0: the
# whole sandbox is under `timeout SECS`; 0: no timeout, and the subshell's pid
# becomes sbx's (srt's) own, every step execs (nice, unshare, sh, env).
launch() {
	local mode=$1 secs=$2 tmo=()
	shift 2
	[ "$secs" -gt 0 ] && tmo=(timeout -k 5 "$secs")
	cd "$PROJ" || exit 1
	case $mode in
	direct|relay) exec "${NICE_CMD[@]}" "${tmo[@]}" "$@" ;;
	floor) HTTP_PROXY=http://127.0.0.1:$RPROXY_PORT exec "${NICE_CMD[@]}" "${tmo[@]}" "$@" ;;
	sbx|cmp) exec "${NICE_CMD[@]}" "${tmo[@]}" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$HOSTS" "$( [ "$mode" = cmp ] && printf '%s' "$CMP" || printf '%s' "$SBX")" -c "$POLICY" -- "$@" ;;
	srt) exec "${NICE_CMD[@]}" "${tmo[@]}" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$HOSTS" "$SRT" --settings "$SRT_JSON" -c "$(printf '%q ' "$@")" ;;
	esac
}

# run ID MODE SECS CMD...: run CMD in MODE's column, output to $M/ID.out, .err; returns its status
run() {
	local id=$1 mode=$2 secs=$3
	shift 3
	(launch "$mode" "$secs" "$@") >"$M/$id.out" 2>"$M/$id.err"
}

# kv ID KEY: the value of KEY=... in $M/ID.out
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$M/$1.out" 2>/dev/null | tail -n 1; }

# errtext ID: the first lines of what a run printed on stderr (and stdout)
errtext() { cat "$M/$1.err" "$M/$1.out" 2>/dev/null | grep -v '^$' | head -n 3 | tr '\n' ' ' | cut -c1-240; }

declare -A V		# V[row:mode] = the figure
declare -A WHY		# WHY[row:mode] = why it is missing
MODES=(direct sbx srt)
[ -n "$CMP" ] && MODES=(direct sbx cmp srt)
RMODES=(direct floor "${MODES[@]:1}")	# the request rows: the relay floor too
declare -A OK=([direct]=1 [sbx]=1 [cmp]=0 [srt]=1 [relay]=$RELAY_OK [floor]=$FLOOR_OK [pdirect]=0 [psbx]=0)
[ -n "$CMP" ] && OK[cmp]=1
declare -A SKIPWHY
[ "$FLOOR_OK" = 1 ] || SKIPWHY[floor]="the relay floor (proxy_load relay) did not start: $(head -c 200 "$M/rproxy.out")"
declare -A PNAME		# PNAME[mode] = which process the memory figures are of

# ---- srt: present, and does its proxy reach the namespace? ------------------------------

if [ -n "${NO_SRT:-}" ]; then
	OK[srt]=0; SKIPWHY[srt]="NO_SRT is set"
elif ! have node || ! have socat || ! have rg; then
	OK[srt]=0; SKIPWHY[srt]="srt needs node, socat and rg here"
elif [ ! -x "$SRT" ] || ! "$SRT" --version 2>/dev/null | grep -qx "$SRT_VERSION"; then
	say "installing srt $SRT_VERSION into $HERE/.srt" >&2
	npm install --loglevel=error --no-audit --no-fund --prefix "$HERE/.srt" \
		"@anthropic-ai/sandbox-runtime@$SRT_VERSION" >"$M/npm.log" 2>&1
	if ! "$SRT" --version 2>/dev/null | grep -qx "$SRT_VERSION"; then
		OK[srt]=0; SKIPWHY[srt]="srt $SRT_VERSION is not installed and npm install failed: $(tail -n 2 "$M/npm.log" | tr '\n' ' ')"
	fi
fi

say "sbx proxy benchmark, $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -sr), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
say "server: 10.200.$NET_N.2 in namespace $NS; sbx $SBX$( [ -n "$CMP" ] && printf ', cmp %s' "$CMP")$( [ -n "${SBX_POLICY_EXTRA:-}" ] && printf ', policy extra: %s' "$(printf "${SBX_POLICY_EXTRA}" | tr '\n' ';')"); sbx $("$SBX" --version 2>/dev/null | head -n 1)$( [ "${OK[srt]}" = 1 ] && printf '; srt %s, node %s' "$("$SRT" --version 2>/dev/null)" "$(node --version)")"
say "open-file limit here: $(ulimit -n) (hard $(ulimit -Hn)); priority: ${NICE_CMD[*]:-normal}"

# one request through each column first: a column whose proxy does not work is reported, not timed
for mode in "${RMODES[@]}"; do
	[ "${OK[$mode]}" = 1 ] || continue
	if ! run "probe_$mode" "$mode" 60 "$PL" reqs "$(target "$mode" 8000)" 1 1 || [ "$(kv "probe_$mode" ok)" != 1 ]; then
		OK[$mode]=0
		SKIPWHY[$mode]="one request through it failed: $(errtext "probe_$mode")"
		note "$mode column skipped: ${SKIPWHY[$mode]}"
	fi
done
if [ "${OK[direct]}" != 1 ]; then
	say "the direct connection to the namespace does not work: ${SKIPWHY[direct]}"
	exit 1
fi

# measure ROW MODE SECS KEY CMD...: one run; V[ROW:MODE] = its KEY, or WHY
measure() {
	local row=$1 mode=$2 secs=$3 key=$4 id
	shift 4
	id=${row}_$mode
	if [ "${OK[$mode]}" != 1 ]; then
		WHY[$row:$mode]="skipped"
		return 1
	fi
	say "  $row / $mode" >&2
	if run "$id" "$mode" "$secs" "$@" && [ -n "$(kv "$id" "$key")" ]; then
		V[$row:$mode]=$(kv "$id" "$key")
		return 0
	fi
	WHY[$row:$mode]="failed: $(errtext "$id")"
	note "$row / $mode: ${WHY[$row:$mode]}"
	return 1
}

# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- 1. bulk ----------------------------------------------------------------------------

say "1. bulk: $BULK_MIB MiB, $BULK_RUNS runs each, the columns interleaved" >&2
declare -A BVALS
for ((i = 1; i <= BULK_RUNS; i++)); do
	for mode in "${MODES[@]}" relay; do
		measure "bulk$i" "$mode" 120 MBps "$PL" bulk "$(target "$mode" 8001)" || continue
		b=$(kv "bulk${i}_$mode" bytes)
		# a stream that ended early still says how fast it went; it is noted
		[ "$b" != "$BULK_BYTES" ] &&
			note "bulk / $mode run $i: the stream ended cleanly after $b of $BULK_BYTES bytes ($((BULK_BYTES - b)) lost at the tail)$( [ -n "$(kv "bulk${i}_$mode" end)" ] && printf '; %s' "$(kv "bulk${i}_$mode" end)")"
		BVALS[$mode]="${BVALS[$mode]:-} ${V[bulk$i:$mode]}"
	done
done
for mode in "${MODES[@]}" relay; do
	if [ -n "${BVALS[$mode]:-}" ]; then
		# shellcheck disable=SC2086
		V[bulk:$mode]=$(median ${BVALS[$mode]})
		V[bulk_all:$mode]=${BVALS[$mode]# }
	else
		WHY[bulk:$mode]=${WHY[bulk1:$mode]:-no complete run}
	fi
done
for mode in "${MODES[@]}"; do
	[ -n "${NO_CURL:-}" ] && break
	[ "${OK[$mode]}" = 1 ] || { WHY[curl:$mode]=skipped; continue; }
	say "  curl / $mode" >&2
	if [ "$mode" = direct ]; then
		url=http://$NSIP:8001/ p=(--noproxy '*')
	else
		url=http://allowed.test:8001/ p=(-p)
	fi
	run "curl_$mode" "$mode" 120 curl -s "${p[@]}" -o /dev/null -w '%{speed_download} %{size_download} %{exitcode}\n' "$url"
	sp='' sz='' ce=''
	read -r sp sz ce <"$M/curl_$mode.out"
	if [ -n "$sz" ] && [ "${sz%.*}" -gt 0 ] 2>/dev/null; then
		V[curl:$mode]=$(awk -v s="$sp" 'BEGIN { printf "%.1f", s / 1e6 }')
		[ "${sz%.*}" = "$BULK_BYTES" ] ||
			note "curl / $mode: got $sz of $BULK_BYTES bytes (curl exit $ce$( [ "$ce" = 18 ] && printf ': partial file, the stream ended early'))"
	else
		WHY[curl:$mode]="failed: $(errtext "curl_$mode")"
		note "curl / $mode: ${WHY[curl:$mode]}"
	fi
done

# ---- 2. requests/s, 3. CONNECT latency: rounds, the columns interleaved ------------------

say "2. requests: $SEQ_N sequential, $PAR_N over $PAR_C clients; 3. CONNECT latency: $HS_N handshakes; $REQ_RUNS round(s)" >&2
declare -A RVALS	# RVALS[row:mode] = each round's figure, in order
for ((i = 1; i <= REQ_RUNS; i++)); do
	for r in seq par hs; do
		for mode in "${RMODES[@]}"; do
			case $r in
			seq) measure "seq$i" "$mode" 300 rps "$PL" reqs "$(target "$mode" 8000)" "$SEQ_N" 1 ;;
			par) measure "par$i" "$mode" 300 rps "$PL" reqs "$(target "$mode" 8000)" "$PAR_N" "$PAR_C" ;;
			hs) measure "hs$i" "$mode" 300 p50_us "$PL" handshake "$(target "$mode" 8002)" "$HS_N" ;;
			esac || continue
			e=$(kv "$r${i}_$mode" err)
			[ -n "$e" ] && [ "$e" != 0 ] && note "$r / $mode round $i: $e failed ($(kv "$r${i}_$mode" last_err))"
			if [ "$r" = hs ]; then
				RVALS[p50:$mode]="${RVALS[p50:$mode]:-} $(kv "hs${i}_$mode" p50_us)"
				RVALS[p99:$mode]="${RVALS[p99:$mode]:-} $(kv "hs${i}_$mode" p99_us)"
			else
				RVALS[$r:$mode]="${RVALS[$r:$mode]:-} ${V[$r$i:$mode]}"
			fi
		done
	done
done
for r in seq par p50 p99; do
	for mode in "${RMODES[@]}"; do
		if [ -n "${RVALS[$r:$mode]:-}" ]; then
			# shellcheck disable=SC2086
			V[$r:$mode]=$(median ${RVALS[$r:$mode]})
			V[${r}_all:$mode]=${RVALS[$r:$mode]# }
		else
			w=${r/p50/hs}; w=${w/p99/hs}
			WHY[$r:$mode]=${WHY[${w}1:$mode]:-no complete run}
		fi
	done
done

# ---- 4. memory with open tunnels ----------------------------------------------------------

# status_kib PID FIELD: FIELD (VmRSS, VmHWM) of PID in KiB
status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }

# wait_phase WORD SECS: until $PROJ/phase starts with WORD
wait_phase() {
	local i
	for ((i = 0; i < $2 * 50; i++)); do
		grep -q "^$1" "$PROJ/phase" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# sbx_proxy_pid SBXPID: the child of sbx that is neither bwrap nor the write observer
# (sbx-observer, also a child of sbx: taking it for the proxy measured the observer's memory)
sbx_proxy_pid() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		case $(cat "/proc/$c/comm" 2>/dev/null) in bwrap|sbx-observer|'') ;; *) echo "$c"; return 0 ;; esac
	done
	return 1
}

# descendants PID: every process below PID
descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END {
			n = split(kids[root], q, " ")
			for (i = 1; i <= n; i++) {
				print q[i]
				m = split(kids[q[i]], more, " ")
				for (j = 1; j <= m; j++) q[++n] = more[j]
			}
		}'
}

# socat_pss PID: "COUNT KIB": socat processes below PID and their summed Pss
socat_pss() {
	local p n=0 kib=0 k
	for p in $(descendants "$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = socat ] || continue
		k=$(awk '$1 == "Pss:" { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null)
		n=$((n + 1)); kib=$((kib + ${k:-0}))
	done
	echo "$n $kib"
}

say "4. memory with $TUNNELS open tunnels" >&2
for mode in sbx srt; do
	[ "${OK[$mode]}" = 1 ] && [ -z "${NO_TUNNELS:-}" ] || { WHY[rss_idle:$mode]=skipped; WHY[rss_open:$mode]=skipped; continue; }
	say "  tunnels / $mode" >&2
	rm -f "$PROJ/phase" "$PROJ/go" "$PROJ/done"
	# one request first: sbx forks its proxy on the first connection, so "idle" is the proxy
	# after one request, in both columns (srt's is up from the start)
	(launch "$mode" 0 sh -c '"$1" reqs "$2" 1 1 >/dev/null; shift 2; exec "$@"' sh "$PL" "$(target "$mode" 8000)" \
		"$PL" tunnels "$(target "$mode" 8002)" "$TUNNELS" "$PROJ" 60) \
		>"$M/tun_$mode.out" 2>"$M/tun_$mode.err" &
	lp=$!
	PIDS+=("$lp")
	pp=
	if wait_phase idle 30; then
		if [ "$mode" = sbx ]; then
			for _ in $(seq 100); do pp=$(sbx_proxy_pid "$lp") && break; sleep 0.05; done
		else
			pp=$lp	# srt's cli is the node process (env execs node): its proxy runs there
		fi
	fi
	if [ -z "$pp" ]; then
		WHY[rss_idle:$mode]="no proxy process found: $(errtext "tun_$mode")"
		WHY[rss_open:$mode]=${WHY[rss_idle:$mode]}
		note "tunnels / $mode: ${WHY[rss_idle:$mode]}"
	else
		sleep 0.2
		V[rss_idle:$mode]=$(status_kib "$pp" VmRSS)
		PNAME[$mode]="pid $pp, $(cat "/proc/$pp/comm" 2>/dev/null), parent $(cat "/proc/$(awk '{print $4}' "/proc/$pp/stat")/comm" 2>/dev/null)"
		: >"$PROJ/go"
		if wait_phase open 90; then
			sleep 0.2
			V[rss_open:$mode]=$(status_kib "$pp" VmRSS)
			V[hwm_open:$mode]=$(status_kib "$pp" VmHWM)
			V[fds_open:$mode]=$(ls "/proc/$pp/fd" 2>/dev/null | wc -l)
			V[nofile:$mode]=$(awk '/^Max open files/ { print $4 "/" $5 }' "/proc/$pp/limits" 2>/dev/null)
			read -r _ V[tun_open:$mode] V[tun_echo:$mode] <"$PROJ/phase"
			[ "$mode" = srt ] && read -r V[socat_n:$mode] V[socat_pss:$mode] < <(socat_pss "$pp")
		else
			WHY[rss_open:$mode]="the client never reported its tunnels open: $(errtext "tun_$mode")"
			note "tunnels / $mode: ${WHY[rss_open:$mode]}"
		fi
		: >"$PROJ/done"
	fi
	: >"$PROJ/go"; : >"$PROJ/done"
	for _ in $(seq 600); do kill -0 "$lp" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$lp" 2>/dev/null && { note "tunnels / $mode: the sandbox did not exit within 60 s of the end; killed"; kill "$lp"; }
	wait "$lp" 2>/dev/null
	forget "$lp"
	V[tun_recheck:$mode]=$(kv "tun_$mode" recheck_ok)
	if [ -n "${V[tun_open:$mode]:-}" ] && [ "${V[tun_open:$mode]}" != "$TUNNELS" ]; then
		note "tunnels / $mode: only ${V[tun_open:$mode]} of $TUNNELS opened ($(kv "tun_$mode" last_err))"
	fi
done

# ---- 5. through a parent proxy ---------------------------------------------------------------

# The parent is a second sbx's proxy, as fast as the one measured (python's upstream_proxy.py of
# the tests would measure python; socat speaks no proxy protocol). sbx has no bare proxy mode and
# refuses expose-port on its own proxy ports, so the parent is `sbx -c PARENT_POLICY -- sleep`,
# and its listener 127.0.0.1:3128 is reached from inside that sandbox's network namespace
# (nsenter --net=/proc/SLEEP/ns/net): a client there (the "parent" column) talks to it directly;
# the "sbx>parent" column runs the measured sbx there with `parent-proxy http://127.0.0.1:3128`,
# so its proxy (forked on the host side, in that namespace) dials the parent's listener, and
# nothing else is reachable from it: every request goes sbx -> parent -> server. Both proxies
# resolve allowed.test from the private hosts file; both run under the same nice.
PMODES=(pdirect psbx)
OK[pdirect]=0; OK[psbx]=0
PARENT_DESC="a second sbx's proxy (sbx -c P -- sleep; its 127.0.0.1:3128 reached from inside that sandbox's network namespace with nsenter)"
PSLEEP=
if [ -n "${NO_PARENT:-}" ]; then
	SKIPWHY[pdirect]="NO_PARENT is set"
elif ! have nsenter; then
	SKIPWHY[pdirect]="nsenter (util-linux) is not installed"
else
	PTOKEN="$((RANDOM + 1000))$$"
	mkdir -p "$WORK/parent"
	(cd "$WORK/parent" && exec "${NICE_CMD[@]}" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$HOSTS" "$SBX" -c "$POLICY" -- sleep "$PTOKEN") >"$M/parent.out" 2>"$M/parent.err" &
	PPID_SBX=$!
	PIDS+=("$PPID_SBX")
	for _ in $(seq 100); do
		for p in $(descendants "$PPID_SBX"); do
			[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")" = "sleep $PTOKEN " ] && { PSLEEP=$p; break 2; }
		done
		sleep 0.05
	done
	if [ -z "$PSLEEP" ]; then
		SKIPWHY[pdirect]="the parent sandbox did not start: $(errtext parent)"
	else
		OK[pdirect]=1; OK[psbx]=1
		printf 'allow-write .\nallow-domain allowed.test\nparent-proxy http://127.0.0.1:3128\n' >"$WORK/policy.parent"
	fi
fi
[ -n "${SKIPWHY[pdirect]:-}" ] && SKIPWHY[psbx]=${SKIPWHY[pdirect]}

# the two columns, as launch's
plaunch() {
	local mode=$1 secs=$2 tmo=()
	shift 2
	[ "$secs" -gt 0 ] && tmo=(timeout -k 5 "$secs")
	cd "$PROJ" || exit 1
	case $mode in
	pdirect) HTTP_PROXY=http://127.0.0.1:3128 exec "${NICE_CMD[@]}" "${tmo[@]}" nsenter --net="/proc/$PSLEEP/ns/net" "$@" ;;
	psbx) exec "${NICE_CMD[@]}" "${tmo[@]}" nsenter --net="/proc/$PSLEEP/ns/net" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$HOSTS" "$SBX" -c "$WORK/policy.parent" -- "$@" ;;
	esac
}
# xmeasure LAUNCHER ROW MODE SECS KEY CMD...: measure's, with a launcher of its own
xmeasure() {
	local launcher=$1 row=$2 mode=$3 secs=$4 key=$5 id
	shift 5
	id=${row}_$mode
	[ "${OK[$mode]}" = 1 ] || { WHY[$row:$mode]=skipped; return 1; }
	say "  $row / $mode" >&2
	if ("$launcher" "$mode" "$secs" "$@") >"$M/$id.out" 2>"$M/$id.err" && [ -n "$(kv "$id" "$key")" ]; then
		V[$row:$mode]=$(kv "$id" "$key")
		return 0
	fi
	WHY[$row:$mode]="failed: $(errtext "$id")"
	note "$row / $mode: ${WHY[$row:$mode]}"
	return 1
}
pmeasure() { xmeasure plaunch "$@"; }
# xprobe LAUNCHER ID MODE TARGET: one request through a column first; a column it fails in is
# skipped, with why
xprobe() {
	local launcher=$1 id=$2 mode=$3 target=$4
	[ "${OK[$mode]}" = 1 ] || return 0
	if ! xmeasure "$launcher" "$id" "$mode" 60 ok "$PL" reqs "$target" 1 1 || [ "$(kv "${id}_$mode" ok)" != 1 ]; then
		OK[$mode]=0
		SKIPWHY[$mode]="one request through it failed: $(errtext "${id}_$mode")"
		note "$mode column skipped: ${SKIPWHY[$mode]}"
	fi
}

for mode in "${PMODES[@]}"; do xprobe plaunch pprobe "$mode" proxy:allowed.test:8000; done
say "5. through a parent proxy ($PARENT_DESC): bulk, requests, CONNECT latency" >&2
declare -A PBVALS
for ((i = 1; i <= BULK_RUNS; i++)); do
	for mode in "${PMODES[@]}"; do
		pmeasure "pbulk$i" "$mode" 120 MBps "$PL" bulk proxy:allowed.test:8001 || continue
		b=$(kv "pbulk${i}_$mode" bytes)
		[ "$b" != "$BULK_BYTES" ] && note "parent bulk / $mode run $i: the stream ended after $b of $BULK_BYTES bytes"
		PBVALS[$mode]="${PBVALS[$mode]:-} ${V[pbulk$i:$mode]}"
	done
done
for mode in "${PMODES[@]}"; do
	# shellcheck disable=SC2086
	[ -n "${PBVALS[$mode]:-}" ] && V[bulk:$mode]=$(median ${PBVALS[$mode]}) && V[bulk_all:$mode]=${PBVALS[$mode]# }
	pmeasure seq "$mode" 300 rps "$PL" reqs proxy:allowed.test:8000 "$SEQ_N" 1
	pmeasure par "$mode" 300 rps "$PL" reqs proxy:allowed.test:8000 "$PAR_N" "$PAR_C"
	for r in seq par; do
		e=$(kv "${r}_$mode" err)
		[ -n "$e" ] && [ "$e" != 0 ] && note "$r / $mode: $e requests failed ($(kv "${r}_$mode" last_err))"
	done
	if pmeasure hs "$mode" 300 p50_us "$PL" handshake proxy:allowed.test:8002 "$HS_N"; then
		V[p50:$mode]=$(kv "hs_$mode" p50_us); V[p99:$mode]=$(kv "hs_$mode" p99_us)
	fi
done
if [ -n "$PSLEEP" ]; then	# the parent sandbox ends with its command
	kill "$PSLEEP" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$PPID_SBX" 2>/dev/null || break; sleep 0.1; done
	wait "$PPID_SBX" 2>/dev/null
	forget "$PPID_SBX"
fi

# ---- 6. network-capture against the CONNECT path ----------------------------------------------

# Both columns run the same client in sbx. "tunnel": it CONNECTs to allowed.test through
# 127.0.0.1:3128 for each request, then sends GET / through the tunnel (the CONNECT path).
# "capture": the policy has network-capture on and hides /etc/hosts inside (deny-read), so the
# client resolves allowed.test through the DNS stub, gets a capture address (127.77.0.1), and
# connects there as a program that ignores HTTP_PROXY does; the proxy takes each connection as
# a CONNECT to allowed.test:PORT. The name is resolved once per client process, as a program
# with a resolver cache would.
CMODES=(ctunnel ccapture)
OK[ctunnel]=1; OK[ccapture]=1
if [ -n "${NO_CAPTURE:-}" ]; then
	OK[ctunnel]=0; OK[ccapture]=0; SKIPWHY[ctunnel]="NO_CAPTURE is set"; SKIPWHY[ccapture]="NO_CAPTURE is set"
fi
printf 'allow-write .\nallow-domain allowed.test:8000\nallow-domain allowed.test:8001\nnetwork-capture on\ndeny-read /etc/hosts\n' \
	>"$WORK/policy.capture"
claunch() {
	local mode=$1 secs=$2 pol=$POLICY tmo=()
	shift 2
	[ "$secs" -gt 0 ] && tmo=(timeout -k 5 "$secs")
	[ "$mode" = ccapture ] && pol=$WORK/policy.capture
	cd "$PROJ" || exit 1
	exec "${NICE_CMD[@]}" "${tmo[@]}" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$HOSTS" "$SBX" -c "$pol" -- "$@"
}
cmeasure() { xmeasure claunch "$@"; }
# ctarget MODE PORT: the client's TARGET in that column
ctarget() { if [ "$1" = ccapture ]; then printf 'name:allowed.test:%s' "$2"; else printf 'tunnel:allowed.test:%s' "$2"; fi; }
for mode in "${CMODES[@]}"; do xprobe claunch cprobe "$mode" "$(ctarget "$mode" 8000)"; done
say "6. network-capture against the CONNECT path: bulk, requests" >&2
declare -A CBVALS
for ((i = 1; i <= BULK_RUNS; i++)); do
	for mode in "${CMODES[@]}"; do
		cmeasure "cbulk$i" "$mode" 120 MBps "$PL" bulk "$(ctarget "$mode" 8001 | sed 's/^tunnel:/proxy:/')" || continue
		CBVALS[$mode]="${CBVALS[$mode]:-} ${V[cbulk$i:$mode]}"
	done
done
for mode in "${CMODES[@]}"; do
	# shellcheck disable=SC2086
	[ -n "${CBVALS[$mode]:-}" ] && V[bulk:$mode]=$(median ${CBVALS[$mode]}) && V[bulk_all:$mode]=${CBVALS[$mode]# }
	cmeasure seq "$mode" 300 rps "$PL" reqs "$(ctarget "$mode" 8000)" "$SEQ_N" 1
	cmeasure par "$mode" 300 rps "$PL" reqs "$(ctarget "$mode" 8000)" "$PAR_N" "$PAR_C"
	for r in seq par; do
		e=$(kv "${r}_$mode" err)
		[ -n "$e" ] && [ "$e" != 0 ] && note "$r / $mode: $e requests failed ($(kv "${r}_$mode" last_err))"
	done
done

# ---- report ---------------------------------------------------------------------------------

# ratio A B: A / B, or "-"
ratio() {
	if [ -z "${1:-}" ] || [ -z "${2:-}" ]; then printf -- '-'; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
}
ge() { [ -n "${1:-}" ] && [ -n "${2:-}" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
cell() { local v=${V[$1:$2]:-}; if [ -n "$v" ]; then printf '%s' "$v"; elif [ "${OK[$2]}" != 1 ] || [ "${WHY[$1:$2]:-}" = skipped ]; then printf 'skip'; else printf 'FAIL'; fi; }

ROWS=(bulk curl seq par p50 p99 rss_idle rss_open)
declare -A RLABEL=(
	[bulk]="bulk ${BULK_MIB} MiB, MB/s (median of $BULK_RUNS)"
	[curl]="bulk ${BULK_MIB} MiB, curl, MB/s (1 run)"
	[seq]="requests/s, $SEQ_N sequential"
	[par]="requests/s, $PAR_N over $PAR_C clients"
	[p50]="CONNECT p50, us (lower=better)"
	[p99]="CONNECT p99, us (lower=better)"
	[rss_idle]="proxy VmRSS idle, KiB"
	[rss_open]="proxy VmRSS, $TUNNELS tunnels, KiB"
)
# the relay floor's column: socat for bulk, proxy_load relay for the request rows
if [ -n "${V[bulk:relay]:-}" ]; then V[bulk:floor]=${V[bulk:relay]}; else WHY[bulk:floor]=${WHY[bulk:relay]:-skipped}; fi
[ "$RELAY_OK" = 1 ] || WHY[bulk:floor]=skipped
say ""
# the cmp columns only with CMP_BIN
cmpcols() { [ -n "$CMP" ] && printf ' %10s %10s %8s' "$@"; }
printf '%-40s %10s %10s %10s%s %10s %11s %11s %10s %9s\n' "row" "direct" "floor" "sbx" "$(cmpcols cmp cmp/direct sbx/cmp)" "srt" \
	"floor/dir" "sbx/direct" "sbx/floor" "sbx/srt"
printf '%-40s %10s %10s %10s%s %10s %11s %11s %10s %9s\n' "---" "------" "-----" "---" "$(cmpcols --- ---------- -------)" "---" \
	"---------" "----------" "---------" "-------"
for r in "${ROWS[@]}"; do
	[ "$r" = curl ] && [ -n "${NO_CURL:-}" ] && continue
	[ "$r" = bulk ] && [ "$BULK_RUNS" = 0 ] && continue
	case $r in rss_*) [ -n "${NO_TUNNELS:-}" ] && continue ;; esac
	d=$(cell "$r" direct); f=$(cell "$r" floor); s=$(cell "$r" sbx); t=$(cell "$r" srt); c=$(cell "$r" cmp)
	case $r in rss_*) d="-" f="-" c="-" ;; curl) f="-" ;; esac
	dv=$( [ "$d" = - ] || printf '%s' "${V[$r:direct]:-}")
	printf '%-40s %10s %10s %10s%s %10s %11s %11s %10s %9s\n' "${RLABEL[$r]}" "$d" "$f" "$s" \
		"$(cmpcols "$c" "$(ratio "${V[$r:cmp]:-}" "$dv")" "$(ratio "${V[$r:sbx]:-}" "${V[$r:cmp]:-}")")" "$t" \
		"$(ratio "${V[$r:floor]:-}" "$dv")" "$(ratio "${V[$r:sbx]:-}" "$dv")" "$(ratio "${V[$r:sbx]:-}" "${V[$r:floor]:-}")" \
		"$(ratio "${V[$r:sbx]:-}" "${V[$r:srt]:-}")"
done
say ""
say "bulk runs, MB/s: direct ${V[bulk_all:direct]:-?} | sbx ${V[bulk_all:sbx]:-?}$( [ -n "$CMP" ] && printf ' | cmp %s' "${V[bulk_all:cmp]:-?}") | srt ${V[bulk_all:srt]:-?} | relay floor ${V[bulk_all:relay]:-?}"
if [ "$REQ_RUNS" -gt 1 ]; then
	for r in seq par p50; do
		line="$r, each round:"
		for mode in "${RMODES[@]}"; do line="$line $mode ${V[${r}_all:$mode]:-?} |"; done
		say "${line% |}"
	done
	# on a shared machine the rounds drift together: a ratio within a round is the steadier figure
	for r in seq par; do
		line="$r, median of the per-round ratios:"
		for pair in sbx/direct floor/direct sbx/floor cmp/direct sbx/cmp; do
			a=${pair%/*} b=${pair#*/} rs=
			for ((i = 1; i <= REQ_RUNS; i++)); do
				x=$(ratio "${V[$r$i:$a]:-}" "${V[$r$i:$b]:-}")
				[ "$x" = - ] || rs="$rs $x"
			done
			# shellcheck disable=SC2086
			[ -n "$rs" ] && line="$line $pair $(median $rs) |"
		done
		say "${line% |}"
	done
fi
say "floor: bulk through socat -b 256K; requests and CONNECT through proxy_load relay (a minimal forwarding proxy, no sandbox, no policy, no lookup)."
say "CONNECT direct column: a bare TCP connect() to the namespace (no proxy), for scale."
for mode in sbx srt; do
	[ -n "${PNAME[$mode]:-}" ] || continue
	say "$mode proxy process: ${PNAME[$mode]}; with the tunnels open: VmHWM ${V[hwm_open:$mode]:-?} KiB, ${V[fds_open:$mode]:-?} fds (limit ${V[nofile:$mode]:-?}); tunnels open ${V[tun_open:$mode]:-?}, echoed ${V[tun_echo:$mode]:-?}, still working after the reading ${V[tun_recheck:$mode]:-?}"
	[ "$mode" = srt ] && [ -n "${V[socat_n:srt]:-}" ] &&
		say "srt socat processes below node with the tunnels open (host bridge and in-sandbox relays, a fork per connection on each side): ${V[socat_n:srt]}, total Pss ${V[socat_pss:srt]} KiB"
done
for mode in "${RMODES[@]}"; do
	[ "${OK[$mode]}" = 1 ] || [ "$mode" = cmp ] || say "$mode column skipped: ${SKIPWHY[$mode]}"
done
if [ -z "${NO_PARENT:-}" ]; then
say ""
say "through a parent proxy: $PARENT_DESC"
printf '%-40s %10s %10s %15s %12s\n' "row" "parent" "sbx>parent" "sbx>par/parent" "sbx>par/sbx"
printf '%-40s %10s %10s %15s %12s\n' "---" "------" "----------" "--------------" "-----------"
for r in bulk seq par p50 p99; do
	printf '%-40s %10s %10s %15s %12s\n' "${RLABEL[$r]}" "$(cell "$r" pdirect)" "$(cell "$r" psbx)" \
		"$(ratio "${V[$r:psbx]:-}" "${V[$r:pdirect]:-}")" "$(ratio "${V[$r:psbx]:-}" "${V[$r:sbx]:-}")"
done
say "parent bulk runs, MB/s: parent ${V[bulk_all:pdirect]:-?} | sbx>parent ${V[bulk_all:psbx]:-?}"
say "columns: parent = the client straight to the parent; sbx>parent = the client in sbx, whose proxy goes on through the parent; sbx>par/sbx = against sbx alone (no parent), above"
for mode in "${PMODES[@]}"; do
	[ "${OK[$mode]}" = 1 ] || say "$mode column skipped: ${SKIPWHY[$mode]}"
done
fi

if [ -z "${NO_CAPTURE:-}" ]; then
say ""
say "network-capture against the CONNECT path (both in sbx)"
printf '%-40s %10s %10s %16s\n' "row" "CONNECT" "capture" "capture/CONNECT"
printf '%-40s %10s %10s %16s\n' "---" "-------" "-------" "---------------"
for r in bulk seq par; do
	printf '%-40s %10s %10s %16s\n' "${RLABEL[$r]}" "$(cell "$r" ctunnel)" "$(cell "$r" ccapture)" \
		"$(ratio "${V[$r:ccapture]:-}" "${V[$r:ctunnel]:-}")"
done
say "capture bulk runs, MB/s: CONNECT ${V[bulk_all:ctunnel]:-?} | capture ${V[bulk_all:ccapture]:-?}"
say "columns: CONNECT = a CONNECT tunnel through 127.0.0.1:3128 per request, then GET /; capture = the client resolves the name through the DNS stub and connects to the capture address (network-capture on)"
for mode in "${CMODES[@]}"; do
	[ "${OK[$mode]}" = 1 ] || say "$mode column skipped: ${SKIPWHY[$mode]}"
done
fi

# what the sandboxes printed on stderr, besides the client (sbx warnings, proxy errors)
odd=$(cat "$M"/*_sbx.err "$M"/*_srt.err 2>/dev/null | grep -v '^proxy_load' | grep -v '^$' | sort | uniq -c | sort -rn | head -n 10)
[ -n "$odd" ] && { say ""; say "stderr of the sandboxed runs (count, line):"; say "$odd"; }

# verdict TEST...: met / NOT met; "not compared" when a figure it needs is missing ("-" or "")
verdict() {
	local a
	for a in "${@:2}"; do
		if [ -z "$a" ] || [ "$a" = - ]; then printf 'not compared (a figure is missing)'; return; fi
	done
	if "$@"; then printf 'met'; else printf 'NOT met'; fi
}
le() { [ -n "${1:-}" ] && [ -n "${2:-}" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
say ""
say "---- summary ----"
say "Measured $(date -u '+%Y-%m-%d') on $(uname -sr), $(nproc) CPUs (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)):"
rb=$(ratio "${V[bulk:sbx]:-}" "${V[bulk:direct]:-}"); rs=$(ratio "${V[bulk:sbx]:-}" "${V[bulk:srt]:-}")
say "- bulk ${BULK_MIB} MiB through one CONNECT tunnel: sbx ${V[bulk:sbx]:-?} MB/s, direct ${V[bulk:direct]:-?}, srt ${V[bulk:srt]:-?}."
say "  target >= 90% of direct: ${rb} -> $(verdict ge "$rb" 0.90); target >= 3x srt: ${rs}x -> $(verdict ge "$rs" 3)."
say "  relay floor (socat -b 256K on this host, no sandbox, no policy): ${V[bulk:relay]:-?} MB/s, $(ratio "${V[bulk:relay]:-}" "${V[bulk:direct]:-}") of direct; sbx is $(ratio "${V[bulk:sbx]:-}" "${V[bulk:relay]:-}") of it."
for r in seq par; do
	x=$(ratio "${V[$r:sbx]:-}" "${V[$r:srt]:-}")
	say "- ${RLABEL[$r]}: sbx ${V[$r:sbx]:-?}, srt ${V[$r:srt]:-?}, direct ${V[$r:direct]:-?}; target >= 5x srt: ${x}x -> $(verdict ge "$x" 5)."
	say "  sbx $(ratio "${V[$r:sbx]:-}" "${V[$r:direct]:-}") of direct; the relay floor (proxy_load relay) ${V[$r:floor]:-?}, $(ratio "${V[$r:floor]:-}" "${V[$r:direct]:-}") of direct; sbx $(ratio "${V[$r:sbx]:-}" "${V[$r:floor]:-}") of the floor$( [ -n "$CMP" ] && printf '; cmp %s (%s of direct)' "${V[$r:cmp]:-?}" "$(ratio "${V[$r:cmp]:-}" "${V[$r:direct]:-}")")."
done
say "- CONNECT handshake: sbx p50 ${V[p50:sbx]:-?} us / p99 ${V[p99:sbx]:-?} us; relay floor p50 ${V[p50:floor]:-?} / p99 ${V[p99:floor]:-?} us$( [ -n "$CMP" ] && printf '; cmp p50 %s / p99 %s us' "${V[p50:cmp]:-?}" "${V[p99:cmp]:-?}"); srt p50 ${V[p50:srt]:-?} / p99 ${V[p99:srt]:-?} us (no target)."
if [ -n "${V[rss_open:sbx]:-}" ]; then
	mib=$(awk -v k="${V[rss_open:sbx]}" 'BEGIN { printf "%.1f", k / 1024 }')
	say "- sbx proxy VmRSS with ${V[tun_open:sbx]:-?} open tunnels: ${V[rss_open:sbx]} KiB (${mib} MiB; idle ${V[rss_idle:sbx]:-?} KiB); target <= 40 MiB: $(verdict le "${V[rss_open:sbx]}" 40960)$( [ "${V[tun_open:sbx]:-}" = "$TUNNELS" ] || printf ' (but not all %s tunnels opened)' "$TUNNELS")$( [ "$TUNNELS" = 1000 ] || printf ' (the target is for 1000 tunnels)')."
	[ -n "${V[rss_open:srt]:-}" ] && say "  srt's node process: ${V[rss_open:srt]} KiB (idle ${V[rss_idle:srt]:-?}), plus ${V[socat_n:srt]:-?} socat processes (${V[socat_pss:srt]:-?} KiB Pss)."
else
	say "- sbx proxy RSS with $TUNNELS tunnels: not measured (${WHY[rss_open:sbx]:-${WHY[rss_idle:sbx]:-?}}); target <= 40 MiB: not met."
fi
if [ -z "${NO_PARENT:-}" ]; then
	say "- through a parent proxy, a second sbx's (sbx>parent against the client straight to that parent; no target):"
	for r in seq par; do
		say "  ${RLABEL[$r]}: sbx>parent ${V[$r:psbx]:-?}, the parent directly ${V[$r:pdirect]:-?} ($(ratio "${V[$r:psbx]:-}" "${V[$r:pdirect]:-}") of it)."
	done
	say "  bulk: sbx>parent ${V[bulk:psbx]:-?} MB/s, the parent directly ${V[bulk:pdirect]:-?} ($(ratio "${V[bulk:psbx]:-}" "${V[bulk:pdirect]:-}")); CONNECT p50 ${V[p50:psbx]:-?} against ${V[p50:pdirect]:-?} us."
fi
if [ -z "${NO_CAPTURE:-}" ]; then
	say "- network-capture against the CONNECT path, both in sbx (no target): requests/s sequential $(ratio "${V[seq:ccapture]:-}" "${V[seq:ctunnel]:-}"), over $PAR_C clients $(ratio "${V[par:ccapture]:-}" "${V[par:ctunnel]:-}"), bulk $(ratio "${V[bulk:ccapture]:-}" "${V[bulk:ctunnel]:-}") of it."
fi
for n in "${NOTES[@]}"; do say "- note: $n"; done
exit 0
