#!/bin/bash
# Reward 1 when /app/hello.txt holds exactly "Hello, world!" (one trailing newline allowed), else 0.
mkdir -p /logs/verifier
if [ -f /app/hello.txt ] && [ "$(cat /app/hello.txt)" = "Hello, world!" ] \
  && [ "$(wc -l < /app/hello.txt)" -le 1 ]; then
  echo 1 > /logs/verifier/reward.txt
  echo "hello_file pass"
else
  echo 0 > /logs/verifier/reward.txt
  echo "hello_file fail"
fi
