package pgtest

import (
	"net/url"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// Proxied returns a new database of a cluster the test starts itself on
// TCP, reached through an in-process Toxiproxy on 127.0.0.1, and its URL
// through the proxy: the test adds toxics to the proxy to drop, delay or
// cut the bytes between a store and PostgreSQL. It skips the test when
// ORCHESTRA_TEST_PG_URL names a cluster (no TCP address to proxy).
func Proxied(t *testing.T) (*toxiproxy.Proxy, string) {
	t.Helper()
	c := Start(t, TCP())
	if c.TCPAddr() == "" {
		t.Skip("needs a PostgreSQL the test starts itself (ORCHESTRA_TEST_PG_URL is set)")
	}
	db := c.NewDatabase(t)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "pg", "127.0.0.1:0", c.TCPAddr())
	require.NoError(t, p.Start())
	t.Cleanup(p.Stop)
	u, err := url.Parse(db)
	require.NoError(t, err)
	q := u.Query()
	q.Del("host")
	q.Del("port")
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	u.Host = p.Listen
	return p, u.String()
}
