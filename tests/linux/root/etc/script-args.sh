#!/bin/sh -e
# A script the personality runs as Linux does a program of init's: its
# interpreter, then the script's path and its arguments (cases.toml).
echo "script: $0, $# arguments: $*"
echo "its name: $(cat /proc/$$/comm)"
