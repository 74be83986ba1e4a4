package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/source/fetch"
)

// TargetsOptions are the options of profq targets.
type TargetsOptions struct {
	Output outputFlags
	input  source.Options
}

func newCmdTargets(stdio IO, runF func(*TargetsOptions, []string) error) *cobra.Command {
	o := &TargetsOptions{Output: outputFlags{kind: report.KindTargets}}
	cmd := &cobra.Command{
		Use:   "targets [flags] SERVER",
		Short: "List what a Pyroscope or Parca server can be queried for: profile types, labels",
		Long: `List what a continuous-profiling server holds over a window of time: its profile types,
which name the TYPE of a fleet query, and its label names with their values, which its
SELECTOR matches (docs/fleet.md).

SERVER is pyroscope+https://HOST[:PORT][/PREFIX] for Grafana Pyroscope or
parca+http://HOST[:PORT][/PREFIX] for Parca (http or https after the +), optionally followed
by ?from=...&until=... (default: the last hour; now-1h, now-7d, RFC 3339 or Unix seconds)
and, for Pyroscope, &tenant=ID. A TYPE{SELECTOR} after the server narrows the labels to
the series it matches.

Credentials: user:password@HOST in the URL, --token-file, --user with --password-file, or
the environment: ` + fetch.EnvFleetToken + `, ` + fetch.EnvFleetUser + ` and ` + fetch.EnvFleetPassword + `,
` + fetch.EnvFleetTenant + `.`,
		Example: `  profq targets 'pyroscope+http://localhost:4040'
  profq targets --format json 'parca+http://localhost:7070?from=now-24h' | jq -r '.profile_types[].id'
  PROFQ_FLEET_USER=123456 PROFQ_FLEET_PASSWORD="$TOKEN" profq targets 'pyroscope+https://profiles-prod-001.grafana.net'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("targets needs one SERVER argument, such as pyroscope+http://localhost:4040")
			}
			if !fetch.IsFleetURL(args[0]) {
				return usageErrorf("targets: %q is not a fleet server: want pyroscope+http(s)://HOST or parca+http(s)://HOST; a Go program's /debug/pprof/ handlers need no listing: read them directly, as profq top http://HOST/debug/pprof/heap", redact.URL(args[0]))
			}
			return nil
		},
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *TargetsOptions, args []string) error {
			return runTargets(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.Var((*timeoutValue)(&o.input.Fetch.Timeout), "timeout", "give up on each request after this long, in seconds or as a duration such as 1m30s (default 65s)")
	fs.Var(&headerValue{h: &o.input.Fetch.Header}, "header", "send this HTTP header, 'Name: value' (repeatable)")
	addFleetFlags(fs, &o.input.Fetch)
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runTargets(stdio IO, o *TargetsOptions, args []string) error {
	if err := o.Output.validate(); err != nil {
		return err
	}
	t, err := o.input.Targets(context.Background(), args[0])
	if err != nil {
		return err
	}
	r := report.NewTargets(targetsReport(t))
	if r.LabelsLeftOut > 0 {
		warn(stdio.Err, []string{fmt.Sprintf("the server has %d label names: the values of the first %d are listed, %d left out; a TYPE{SELECTOR} narrows the labels to those of some series",
			len(r.Labels)+r.LabelsLeftOut, len(r.Labels), r.LabelsLeftOut)})
	}
	return o.Output.report(stdio, r, func(w io.Writer, format render.Format) error {
		return render.Targets(w, r, render.Options{Format: format})
	})
}

// targetsReport is what the targets report says of a server's answer.
func targetsReport(t *fetch.Targets) report.Targets {
	r := report.Targets{
		Server:        t.Server,
		ServerKind:    t.Kind,
		StartNanos:    t.Start.UnixNano(),
		EndNanos:      t.End.UnixNano(),
		ProfileTypes:  make([]report.TargetType, len(t.Types)),
		Labels:        make([]report.TargetLabel, len(t.Labels)),
		LabelsLeftOut: t.LabelsLeftOut,
	}
	for i, pt := range t.Types {
		r.ProfileTypes[i] = report.TargetType{
			ID:         pt.ID,
			Name:       pt.Name,
			SampleType: report.SampleType{Type: pt.SampleType, Unit: pt.SampleUnit},
			PeriodType: report.SampleType{Type: pt.PeriodType, Unit: pt.PeriodUnit},
			Delta:      pt.Delta,
		}
	}
	for i, l := range t.Labels {
		r.Labels[i] = report.TargetLabel{Name: l.Name, Values: l.Values}
	}
	return r
}
