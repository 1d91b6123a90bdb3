"""A model of column_centre's stores (columns_vectors.cu) for V-element
vectors: per block and row, which thread stores which output, by the same
rules as the kernel. Checks that every element of x - mean(x, 1) of an
A x R x C array is stored exactly once, with its own result, on random
shapes; no GPU needed.

    python3 bench/probes/columns_vectors_stores.py
"""
import random


def stores(A, R, C, V):
    """Each stored element's address -> the (a, c, r) whose result it holds."""
    G = (C + V - 1) // V
    groups = A * G
    out = {}

    def put(addr, who):
        assert addr not in out, f"({A}, {R}, {C}) V {V}: element {addr} stored twice"
        out[addr] = who

    for b in range((groups + 31) // 32):
        lanes = []
        for lane in range(32):
            g = b * 32 + lane
            live = g < groups
            lanes.append((live, g // G if live else -1, (g % G) * V if live else 0))
        for r in range(R):
            rows = []
            for lane, (live, a, c0) in enumerate(lanes):
                e = (a * R + r) * C + c0 if live else 0
                ld = e % V if live else 0
                follows = lane < 31 and lanes[lane + 1][1] == a and live and c0 + V < C
                whole = live and (c0 + V <= C if ld == 0 else follows and c0 + 2 * V - ld <= C)
                rows.append((live, a, c0, e, ld, whole))
            for lane, (live, a, c0, e, ld, whole) in enumerate(rows):
                if whole:
                    start = e + (V - ld if ld else 0)
                    assert start % V == 0
                    for k in range(V):
                        i = (V - ld) + k if ld else k  # in this thread's results, then the next's
                        src = rows[lane if i < V else lane + 1]
                        put(start + k, (src[1], src[2] + i % V, r))
                elif live:
                    for j in range(V - ld if ld else 0, min(V, C - c0)):
                        put(e + j, (a, c0 + j, r))
                before = lane > 0 and rows[lane - 1][5] and rows[lane - 1][4] != 0
                if live and ld and not before:
                    for j in range(min(V - ld, C - c0)):
                        put(e + j, (a, c0 + j, r))
    return out


def check(A, R, C, V):
    out = stores(A, R, C, V)
    assert len(out) == A * R * C, f"({A}, {R}, {C}) V {V}: {len(out)} of {A * R * C} stored"
    for addr, (a, c, r) in out.items():
        assert addr == (a * R + r) * C + c, f"({A}, {R}, {C}) V {V}: {addr} holds ({a}, {r}, {c})"


def main():
    random.seed(1)
    shapes = 0
    for V in (4, 8):
        for _ in range(300):
            check(random.randint(1, 6), random.randint(1, 5), random.randint(1, 300), V)
            shapes += 1
    print(f"{shapes} shapes: every element stored once, with its own result")


if __name__ == "__main__":
    main()
