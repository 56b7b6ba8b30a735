package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/askslack/askslack/internal/loadbench"
)

// burstWindow is one window of the open-asks test right after the burst
// that opened the asks: what the bot and Redis did meanwhile, per second.
type burstWindow struct {
	from, to   time.Duration // since the burst's end
	ops, reads float64       // Redis commands and read events (round trips) per second
	cores      float64       // the bot's CPU seconds per second
	redisCores float64       // redis-server's (INFO cpu)
	slack      float64       // Slack calls per second
}

// worstWindows returns the index of the window with the most Redis
// commands a second and of the one with the most bot CPU (-1, -1 without
// windows); the first wins a tie.
func worstWindows(ws []burstWindow) (ops, cores int) {
	ops, cores = -1, -1
	for i, w := range ws {
		if ops < 0 || w.ops > ws[ops].ops {
			ops = i
		}
		if cores < 0 || w.cores > ws[cores].cores {
			cores = i
		}
	}
	return ops, cores
}

// afterBurst measures, from the burst's end (end: the fake has seen every
// question posted) for --after-burst and on until the store's deferred
// bookkeeping of the burst is done (row.settle, from end), the bot's CPU
// and the Redis commands in --after-burst-window windows, so deferred work
// the burst left behind (the audit chainer's second look at each ask, half
// a minute or more after chaining it) shows as the windows it lands in,
// and the quiet window that follows measures what sitting costs. With
// --after-burst 0 it only waits for the bookkeeping. The bench's own Redis
// commands (INFO, the pending count polled every second) are taken out of
// the figures (loadbench.RedisStats.Sub).
// settleLimit bounds the wait for the store's bookkeeping of the burst.
const settleLimit = 4 * time.Minute

func (b *benchRun) afterBurst(ctx context.Context, c *child, fake *loadbench.Slack, end time.Time, row *openRow) error {
	settled := !b.f.settle // not waited for: row.settle stays 0, shown as -
	var pending int64
	poll := func() error {
		if settled {
			return nil
		}
		n, err := b.redis.Card(ctx, auditPending)
		if err != nil {
			return err
		}
		pending = n
		if n == 0 {
			settled, row.settle = true, time.Since(end)
		}
		return nil
	}
	if w := b.f.afterBurstWindow; b.f.afterBurst > 0 {
		p0, err := loadbench.ReadProc(c.cmd.Process.Pid)
		if err != nil {
			return err
		}
		r0, err := b.redis.Stats(ctx)
		if err != nil {
			return err
		}
		s0, t0 := fake.Counters(), time.Now()
		for at := w; at <= b.f.afterBurst || !settled; at += w {
			if at > settleLimit {
				return fmt.Errorf("open asks: the audit chainer still has %d asks to look at %s after the burst", pending, time.Since(end).Round(time.Second))
			}
			until := end.Add(at)
			for now := time.Now(); now.Before(until); now = time.Now() {
				if err := poll(); err != nil {
					return err
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(min(time.Second, until.Sub(now))): // measuring equipment: a window's end
				}
			}
			p1, err := loadbench.ReadProc(c.cmd.Process.Pid)
			if err != nil {
				return err
			}
			r1, err := b.redis.Stats(ctx)
			if err != nil {
				return err
			}
			s1, t1 := fake.Counters(), time.Now()
			d, secs := r1.Sub(r0), t1.Sub(t0).Seconds()
			win := burstWindow{from: t0.Sub(end), to: t1.Sub(end), ops: float64(d.Commands) / secs, reads: float64(d.Reads) / secs,
				cores: (p1.CPU - p0.CPU).Seconds() / secs, redisCores: d.CPU.Seconds() / secs, slack: float64(s1.Sub(s0).Calls()) / secs}
			row.windows = append(row.windows, win)
			b.progress("open asks: %.0f–%.0fs after the burst: %.0f redis ops/s, %.3f bot cores, %d asks for the audit chainer to look at",
				win.from.Seconds(), win.to.Seconds(), win.ops, win.cores, pending)
			p0, r0, s0, t0 = p1, r1, s1, t1
		}
	}
	for !settled {
		if err := poll(); err != nil || settled {
			return err
		}
		if time.Since(end) > settleLimit {
			return fmt.Errorf("open asks: the audit chainer still has %d asks to look at %s after the burst", pending, time.Since(end).Round(time.Second))
		}
		b.progress("open asks: the audit chainer has %d asks to look at", pending)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second): // measuring equipment: poll the store
		}
	}
	return nil
}
