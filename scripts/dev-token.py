#!/usr/bin/env python3
"""Test tokens for `--auth jwt`, with nothing but Python's standard library and the openssl command.

  scripts/dev-token.py keygen DIR            an RS256 key pair: DIR/signing-key.pem (private, mode 0600) and
                                             DIR/jwks.json (the public JWK Set to give to --jwt-jwks)
  scripts/dev-token.py mint DIR --sub alice [--scope "unicache:read unicache:admin"] [--ttl 3600]
                                            [--iss ISSUER] [--aud unicache] [--kid dev-1]
                                             prints a signed token (RS256, kid dev-1) for the audience
                                             `unicache` (give the service --jwt-audience unicache)

For development and tests only: a real deployment takes its tokens from its identity provider.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import time

KID = "dev-1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def keygen(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    key = os.path.join(folder, "signing-key.pem")
    old_umask = os.umask(0o077)
    try:
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key],
                       check=True, stderr=subprocess.DEVNULL)
    finally:
        os.umask(old_umask)
    modulus = subprocess.run(["openssl", "rsa", "-in", key, "-noout", "-modulus"], check=True,
                             capture_output=True, text=True).stdout.strip().split("=", 1)[1]
    jwk = {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": KID,
           "n": b64url(bytes.fromhex(modulus)), "e": b64url((65537).to_bytes(3, "big"))}
    with open(os.path.join(folder, "jwks.json"), "w", encoding="utf-8") as out:
        json.dump({"keys": [jwk]}, out, indent=2)
        out.write("\n")
    print(f"wrote {key} and {os.path.join(folder, 'jwks.json')}")


def mint(folder: str, args: argparse.Namespace) -> None:
    now = int(time.time())
    claims = {"sub": args.sub, "iat": now, "exp": now + args.ttl}
    if args.scope:
        claims["scope"] = args.scope
    if args.iss:
        claims["iss"] = args.iss
    if args.aud:
        claims["aud"] = args.aud
    header = {"alg": "RS256", "typ": "JWT", "kid": args.kid}
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "."
                     + b64url(json.dumps(claims, separators=(",", ":")).encode()))
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", os.path.join(folder, "signing-key.pem")],
                               input=signing_input.encode(), check=True, capture_output=True).stdout
    print(signing_input + "." + b64url(signature))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("keygen").add_argument("dir")
    minting = commands.add_parser("mint")
    minting.add_argument("dir")
    minting.add_argument("--sub", required=True)
    minting.add_argument("--scope")
    minting.add_argument("--ttl", type=int, default=3600)
    minting.add_argument("--iss")
    minting.add_argument("--aud", default="unicache", help="the token's aud (default unicache; '' for none)")
    minting.add_argument("--kid", default=KID)
    args = parser.parse_args()
    if args.command == "keygen":
        keygen(args.dir)
    else:
        mint(args.dir, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
