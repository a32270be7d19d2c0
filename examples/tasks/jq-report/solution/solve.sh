#!/bin/bash
set -e
jq '[.[] | select(.status == "paid")]
    | { customers: (group_by(.customer) | map({ key: .[0].customer, value: (map(.amount) | add) }) | from_entries),
        total: (map(.amount) | add // 0) }' /app/orders.json > /app/report.json
