#!/bin/sh
# Joins the nodes named on the command line into one cluster with one replica per master
# (DONJON_REPLICAS to change it), once: a cluster that is up already is left as it is (a restart
# of the stack).
set -eu
first="$1"
until valkey-cli -h "$first" ping >/dev/null 2>&1; do sleep 0.5; done
if valkey-cli -h "$first" cluster info | grep -q '^cluster_state:ok'; then
  echo "cluster-init: the cluster is up already"
  exit 0
fi
addresses=""
for host in "$@"; do
  until valkey-cli -h "$host" ping >/dev/null 2>&1; do sleep 0.5; done
  addresses="$addresses $(getent hosts "$host" | cut -d' ' -f1):6379"
done
# shellcheck disable=SC2086
valkey-cli --cluster create $addresses --cluster-replicas "${DONJON_REPLICAS:-1}" --cluster-yes
until valkey-cli -h "$first" cluster info | grep -q '^cluster_state:ok'; do sleep 0.5; done
echo "cluster-init: cluster of $# nodes is up"
