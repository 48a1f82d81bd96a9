#!/usr/bin/env bash
# A cluster of N "machines" on this one: network namespaces tbnode0..tbnode{N-1}, each with an
# interface eth0 (10.77.0.{i+1}/24) on a veth link to a bridge in namespace tbswitch, the link's
# rate limited both ways by tc's tbf qdisc, so traffic between the nodes costs what it costs
# between machines on such a link. The root namespace is not touched. Needs root and iproute2.
#
#   scripts/netns_cluster.sh up N RATE     RATE as tc reads it: 10gbit, 1gbit, 500mbit
#   scripts/netns_cluster.sh down          removes every namespace it made
#   scripts/netns_cluster.sh addr I        node I's address
#
# A process runs on node I with `ip netns exec tbnode$I CMD`; python/tilebank/launch.py --netns
# starts training ranks that way (GLOO_SOCKET_IFNAME=eth0).
set -euo pipefail
switch=tbswitch
node_prefix=tbnode

die() { echo "netns_cluster.sh: $*" >&2; exit 2; }

down() {
  for ns in $(ip netns list | awk '{print $1}'); do
    case "$ns" in "$switch" | "$node_prefix"[0-9]*) ip netns del "$ns" ;; esac
  done
}

# tbf's bucket must hold at least one timer tick's worth of bytes at the rate (and a jumbo frame).
burst_for() {
  local rate=$1 bits
  bits=$(echo "$rate" | awk '{r=tolower($0); n=r+0; if (r ~ /gbit/) n*=1e9; else if (r ~ /mbit/) n*=1e6; else if (r ~ /kbit/) n*=1e3; printf "%.0f\n", n}')
  [ "$bits" -gt 0 ] || die "'$rate' is not a rate tc reads (10gbit, 1gbit, 500mbit)"
  echo $(( bits / 8 / 250 > 65536 ? bits / 8 / 250 : 65536 ))
}

up() {
  local n=$1 rate=$2 burst
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 200 ] || die "N must be a number from 2 to 200, not '$n'"
  burst=$(burst_for "$rate")
  [ "$(id -u)" -eq 0 ] || die "making network namespaces needs root"
  down
  ip netns add "$switch"
  ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set br0 up
  for ((i = 0; i < n; i++)); do
    local ns="$node_prefix$i"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip link add "tbv$i" type veth peer name "tbp$i"
    ip link set "tbv$i" netns "$ns"
    ip link set "tbp$i" netns "$switch"
    ip -n "$ns" link set "tbv$i" name eth0
    ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$switch" link set "tbp$i" master br0
    ip -n "$switch" link set "tbp$i" up
    # Both directions: the node's sending side and the switch port's side towards the node.
    ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 100ms
    ip netns exec "$switch" tc qdisc add dev "tbp$i" root tbf rate "$rate" burst "$burst" latency 100ms
  done
  echo "netns_cluster.sh: $n nodes ${node_prefix}0..${node_prefix}$((n - 1)) at $rate, 10.77.0.1..10.77.0.$n"
}

case "${1:-}" in
  up) [ $# -eq 3 ] || die "usage: up N RATE"; up "$2" "$3" ;;
  down) down ;;
  addr) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "usage: addr I"; echo "10.77.0.$(( $2 + 1 ))" ;;
  *) die "usage: netns_cluster.sh up N RATE | down | addr I" ;;
esac
