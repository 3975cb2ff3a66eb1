#!/bin/exec child
