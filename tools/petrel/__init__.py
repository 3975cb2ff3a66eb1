"""Petrel's host tooling: setup, build, boot images, QEMU runs and the test runner.

Everything in this package runs on the developer's machine (or CI), never in the
guest. Modules are small and each holds one concept:

- cli          the `./petrel` command line (argparse subcommands)
- envsetup     installs Debian packages and the project virtualenv, re-executes under it
- build        runs make and packs the system boot images
- systems      reads systems/*.toml into boot image entries
- bootimage    the PBI boot image format (pack, unpack, list)
- qemu         builds the QEMU command line and runs QEMU with a timeout
- cases        reads tests/guest/cases.toml and expands test matrices
- tap          parses the Test Anything Protocol out of a console log
- testrun      runs guest cases and host pytest, prints one line per test
- dtbfixtures  writes good and deliberately broken device trees for the guest tests
"""
