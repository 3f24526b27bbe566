# Fuzzing (tests/fuzz, included by the Makefile): gpup2p built with AddressSanitizer and
# UndefinedBehaviorSanitizer (gcc or clang, nothing else needed) for tests/fuzz/fuzz.py.
# `make check` replays tests/fuzz/regress/ and runs a short round (tests/cli/test_fuzz.sh);
# `make fuzz` runs longer: FUZZ_TIME seconds (default 600) per target of FUZZ_TARGETS (default: tree, the
# mutated sysfs roots; doctor, doctor --root/--kmsg on its fixtures; report, gpup2p report's input;
# FUZZ_TARGETS=doctor for one), FUZZ_SEED (default: the time), findings minimised into
# $(BUILD)/fuzz/findings/ (copy one to tests/fuzz/regress/ once it is fixed).
# float-cast-overflow: gcc leaves it out of -fsanitize=undefined (a double out of an int's range cast)
FUZZ_SAN = -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BIN = $(BUILD)/fuzz/gpup2p
FUZZ_TIME ?= 600
FUZZ_SEED ?= $(shell date +%s)
FUZZ_TARGETS ?= tree doctor report

.PHONY: fuzz

$(FUZZ_BIN): $(LIB_SRC) $(CLI_SRC) $(wildcard libcore/include/gpup2p/*.h) $(wildcard libcore/*.h libcore/*/*.h) $(wildcard cli/*.h)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CFLAGS="$(FUZZ_SAN)" $(FUZZ_BIN)

fuzz: $(FUZZ_BIN) fixtures
	python3 tests/fuzz/fuzz.py --bin $(FUZZ_BIN) --fixtures $(BUILD)/fixtures --replay tests/fuzz/regress/*.json
	for t in $(FUZZ_TARGETS); do nice -n 10 python3 tests/fuzz/fuzz.py --bin $(FUZZ_BIN) --fixtures $(BUILD)/fixtures \
		--target $$t --time $(FUZZ_TIME) --seed $(FUZZ_SEED) --findings $(BUILD)/fuzz/findings \
		--pending tests/fuzz/pending || exit 1; done
