#!/bin/bash
# C++ names demangled in every output (issue 43): a g++ program spinning
# in shop::Cart::checkout(int), called from a template and a lambda,
# sampled by a real daemon.  dump's JSON names the frame
# "shop::Cart::checkout(int)+0x.." with "mangled":
# "_ZN4shop4Cart8checkoutEi" beside it; text, folded and report print the
# demangled name; pprof's function has it as name and the mangled one as
# system_name (read back by go tool pprof).
# Usage: test-cxx-names.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/cart.cc" <<'CXX'
#include <chrono>
#include <cstdlib>
namespace shop {
struct Cart {
	volatile double total = 0;
	__attribute__((noinline)) double checkout(int n)
	{
		for (int i = 0; i < n; i++)
			total = total + i * 0.5;
		return total;
	}
};
}
template <typename F> __attribute__((noinline)) double run_for(double secs, F f)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	double x = 0;
	while (std::chrono::steady_clock::now() < end)
		x += f();
	return x;
}
int main(int argc, char **argv)
{
	shop::Cart c;
	return run_for(atof(argv[1]), [&] { return c.checkout(200000); }) < 0;
}
CXX
g++ -O2 -g -o "$T/fr-cart" "$T/cart.cc" || fail "g++ failed"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 97; }; };
CONF
start_daemon "$T/fr.conf"
"$T/fr-cart" 3
sleep 1.5

"$FRCTL" --store "$T/store" dump --last 10s --type sample --format json >"$T/s.json"
n=$(jq -s '[.[] | select(.comm == "fr-cart")] | length' "$T/s.json")
[ "$n" -ge 100 ] || fail "only $n samples of fr-cart"
good=$(jq -s '[.[] | select(.comm == "fr-cart") | select(any(.stack[];
	((.sym // "") | startswith("shop::Cart::checkout(int)+0x")) and .mangled == "_ZN4shop4Cart8checkoutEi"))] | length' "$T/s.json")
[ $((good * 100)) -ge $((n * 90)) ] ||
	fail "$good of $n samples name shop::Cart::checkout(int) with its mangled name: $(jq -s -c '[.[] | select(.comm == "fr-cart")][0].stack' "$T/s.json")"
ok "json: $good of $n samples in shop::Cart::checkout(int), \"mangled\": \"_ZN4shop4Cart8checkoutEi\""
jq -s -e '[.[] | select(.comm == "fr-cart") | .stack[] | select(.mangled == null) | .sym // "" | select(startswith("_Z"))] | length == 0' \
	"$T/s.json" >/dev/null || fail "a frame still mangled: $(jq -s -c '[.[] | .stack[] | .sym // "" | select(startswith("_Z"))][0:3]' "$T/s.json")"
jq -s -e '[.[] | select(.comm == "fr-cart") | .stack[] | .sym // "" | select(startswith("double run_for<"))] | length > 0' \
	"$T/s.json" >/dev/null || fail "the template frame is not named run_for<...>"
ok "json: no frame left mangled; the template demangled ($(jq -s -r '[.[] | .stack[] | .sym // "" | select(startswith("double run_for<"))][0]' "$T/s.json"))"

"$FRCTL" --store "$T/store" dump --last 10s --type sample >"$T/s.txt"
grep -q 'shop::Cart::checkout(int)' "$T/s.txt" || fail "text dump without shop::Cart::checkout(int)"
"$FRCTL" --store "$T/store" dump --last 10s --type sample --format folded >"$T/s.folded"
grep -q '^fr-cart;.*;shop::Cart::checkout(int) [0-9]*$' "$T/s.folded" ||
	fail "folded: $(grep '^fr-cart' "$T/s.folded" | head -3)"
"$FRCTL" --store "$T/store" report --last 10s >"$T/report.txt"
grep -q 'shop::Cart::checkout(int)' "$T/report.txt" || fail "report without shop::Cart::checkout(int)"
ok "text, folded and report print shop::Cart::checkout(int)"

"$FRCTL" --store "$T/store" dump --last 10s --format pprof -o "$T/p.pb.gz" || fail "pprof output failed"
# pprof writes nothing of its own but may look for a home and a cache
HOME="$T" GOCACHE="$T/go-cache" PPROF_TMPDIR="$T" GOTOOLCHAIN=local go tool pprof -symbolize=none -raw "$T/p.pb.gz" \
	>"$T/p.raw" 2>"$T/pprof.err" || fail "go tool pprof: $(cat "$T/pprof.err")"
# -raw prints a location's function as NAME FILE:LINE s=START(SYSTEM_NAME)
grep -q 'shop::Cart::checkout(int) .*(_ZN4shop4Cart8checkoutEi)$' "$T/p.raw" ||
	fail "pprof: no function shop::Cart::checkout(int) with system name _ZN4shop4Cart8checkoutEi: $(grep -i checkout "$T/p.raw" | head -3)"
ok "pprof: function shop::Cart::checkout(int), system_name _ZN4shop4Cart8checkoutEi"
stop_daemon
echo "cxx-names: all checks passed"
