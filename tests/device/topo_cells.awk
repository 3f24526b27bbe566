# Compare two `topo -m` matrices cell for cell: gpup2p's (first file) and nvidia-smi's (second file).
# Escape sequences (underline, colour) are dropped, cells are split on tabs and trimmed; the matrix
# ends at the first empty line. Prints one line per disagreement ("topo: GPU0 / NUMA Affinity:
# gpup2p 'N/A', nvidia-smi '0'") and exits 1 if any; header cells are compared as a row named
# "header". Usage: awk -f topo_cells.awk GPUP2P_FILE NVIDIA_SMI_FILE
function clean(s) {
	gsub(/\033\[[0-9;]*m/, "", s)
	return s
}
function trim(s) {
	sub(/^[ ]+/, "", s)
	sub(/[ ]+$/, "", s)
	return s
}
FNR == 1 { f++; row = 0; done = 0 }
done { next }
{
	line = clean($0)
	if (line ~ /^[ \t]*$/) { done = 1; next }
	n = split(line, c, "\t")
	name = row == 0 ? "header" : trim(c[1])
	row++
	rows[f, row] = name
	nrow[f] = row
	ncell[f, row] = n
	for (k = 1; k <= n; k++)
		cell[f, row, k] = trim(c[k])
}
END {
	bad = 0
	if (f < 2) { print "topo: need two files"; exit 2 }
	if (nrow[1] != nrow[2]) {
		printf "topo: %d rows from gpup2p, %d from nvidia-smi\n", nrow[1] - 1, nrow[2] - 1
		bad++
	}
	for (r = 1; r <= nrow[1] && r <= nrow[2]; r++) {
		if (rows[1, r] != rows[2, r]) {
			printf "topo: row %d is %s in gpup2p, %s in nvidia-smi\n", r - 1, rows[1, r], rows[2, r]
			bad++
			continue
		}
		m = ncell[1, r] > ncell[2, r] ? ncell[1, r] : ncell[2, r]
		for (k = 2; k <= m; k++) {
			a = cell[1, r, k]; b = cell[2, r, k]
			if (a == b)
				continue
			h = k <= ncell[2, 1] ? k : ncell[2, 1] # nvidia-smi's rows have two tabs before GPU NUMA ID
			col = r > 1 && cell[2, 1, h] != "" ? cell[2, 1, h] : "column " k
			printf "topo: %s / %s: gpup2p '%s', nvidia-smi '%s'\n", rows[1, r], col, a, b
			bad++
		}
	}
	exit bad ? 1 : 0
}
