"""A reference operator wallet: the operator's side of a seamless-wallet integration (Hub88's
wallet API: /user/balance, /transaction/bet, /transaction/win, /transaction/rollback, signed
RSA-SHA256 both ways in X-Hub88-Signature), as a real HTTP service with its own users,
balances and transactions, and faults injected on demand (timeouts, 5xx, answers that are not
JSON or are wrongly signed, forced "not enough money", slow answers, outages). Our game server,
as the supplier, is tested against it.

Run it on its own (a test key pair is generated into the --keys folder if it has none):

    .venv-test/bin/python -m tests.wallet --keys /tmp/wallet-keys --port 8765

or with key files of your own (--supplier-public-key, --operator-private-key). Drive it through
its unsigned admin API under /_admin (users, tokens, balances, the journal, faults, outages:
see reference.py). From tests, `tests.wallet.harness.running_wallet` starts it in a process of
its own on a free port and stops it afterwards; its own tests:

    .venv-test/bin/pytest -q tests/wallet -p no:cacheprovider

Modules: keys (key pairs, `sign` and `verify` for either side), reference (the wallet),
harness (a running wallet and signed calls to it), __main__ (the command line).
"""
