package loadbench

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxSamples bounds a Samples; later samples replace earlier ones at
// random positions (a reservoir), so percentiles stay representative.
const maxSamples = 200_000

// Samples collects durations for percentiles. The zero value is ready.
type Samples struct {
	d    []time.Duration
	seen int
}

// Add records one duration.
func (s *Samples) Add(d time.Duration) {
	s.seen++
	if len(s.d) < maxSamples {
		s.d = append(s.d, d)
		return
	}
	if i := rand.IntN(s.seen); i < maxSamples { // reservoir sampling
		s.d[i] = d
	}
}

// Merge adds every sample of o.
func (s *Samples) Merge(o Samples) {
	for _, d := range o.d {
		s.Add(d)
	}
}

// Len is the number of durations recorded.
func (s *Samples) Len() int { return s.seen }

// Percentile returns the p-th percentile (0 < p ≤ 100), 0 without samples.
func (s *Samples) Percentile(p float64) time.Duration {
	if len(s.d) == 0 {
		return 0
	}
	c := slices.Clone(s.d)
	slices.Sort(c)
	i := int(float64(len(c))*p/100+0.5) - 1
	return c[min(max(i, 0), len(c)-1)]
}

// clockTick is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; 100 on
// every Linux architecture Go supports.
const clockTick = 100

// Proc is a process's resource use read from /proc.
type Proc struct {
	CPU     time.Duration // user + system time so far
	RSS     int64         // resident set size, bytes
	Threads int
}

// ReadProc reads /proc/<pid>/stat and /proc/<pid>/status.
func ReadProc(pid int) (Proc, error) {
	var p Proc
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, err
	}
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'. utime and stime are fields 14 and 15 (1-based), that is
	// 12 and 13 after the state field at index 0 here.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return p, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return p, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	p.CPU = time.Duration(ut+st) * time.Second / clockTick
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			p.RSS = kb * 1024
		case strings.HasPrefix(line, "Threads:"):
			p.Threads, _ = strconv.Atoi(strings.Fields(line)[1])
		}
	}
	return p, sc.Err()
}
