#!/bin/bash
# The greeting the skill describes.
echo "Hello, world!" > /app/hello.txt
