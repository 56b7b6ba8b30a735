package blockcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// JSON builders, to keep the table readable.

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

func rep(n int) string { return strings.Repeat("a", n) }

func pt(s string) string { return `{"type":"plain_text","text":` + q(s) + `}` }

func md(s string) string { return `{"type":"mrkdwn","text":` + q(s) + `}` }

func opt(text, value string) string { return `{"text":` + pt(text) + `,"value":` + q(value) + `}` }

func opts(n int) string {
	o := make([]string, n)
	for i := range o {
		o[i] = opt(fmt.Sprintf("o%d", i), fmt.Sprintf("v%d", i))
	}
	return "[" + strings.Join(o, ",") + "]"
}

func repeatJSON(n int, item string) string {
	return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
}

func arr(items ...string) string { return "[" + strings.Join(items, ",") + "]" }

func section(text string) string { return `{"type":"section","text":` + md(text) + `}` }

func button(text string) string {
	return `{"type":"button","action_id":"b","text":` + pt(text) + `,"value":"v"}`
}

func actions(elements ...string) string {
	return `{"type":"actions","elements":` + arr(elements...) + `}`
}

// withElement puts one element in an actions block.
func withElement(el string) string { return arr(actions(el)) }

func input(el string) string {
	return `{"type":"input","block_id":"in","label":` + pt("Label") + `,"element":` + el + `}`
}

func modal(blocks ...string) string {
	return `{"type":"modal","title":` + pt("Title") + `,"submit":` + pt("Submit") + `,"blocks":` + arr(blocks...) + `}`
}

func confirm(title, text, yes, no string) string {
	return `{"title":` + pt(title) + `,"text":` + md(text) + `,"confirm":` + pt(yes) + `,"deny":` + pt(no) + `}`
}

type testCase struct {
	name string
	view bool   // check json with View; else json is the blocks of a Message with text "t"
	json string // blocks array or view object
	want string // "" = valid; else the JSON pointer of an expected problem
}

func check(tc testCase) error {
	if tc.view {
		return View(json.RawMessage(tc.json))
	}
	return Message("t", json.RawMessage(tc.json))
}

func runCases(t *testing.T, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := check(tc)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var ps *Problems
			if !errors.As(err, &ps) {
				t.Fatalf("want a problem at %s, got %v", tc.want, err)
			}
			for _, p := range ps.List {
				if p.Pointer == tc.want {
					return
				}
			}
			t.Fatalf("want a problem at %s, got %v", tc.want, err)
		})
	}
}

func TestMessageText(t *testing.T) {
	t.Parallel()
	if err := Message("", nil); !errors.Is(err, ErrNoText) {
		t.Errorf("no text, nil blocks: got %v, want ErrNoText", err)
	}
	if err := Message("", json.RawMessage(" [] ")); !errors.Is(err, ErrNoText) {
		t.Errorf("no text, empty blocks: got %v, want ErrNoText", err)
	}
	if err := Message("", json.RawMessage("null")); !errors.Is(err, ErrNoText) {
		t.Errorf("no text, null blocks: got %v, want ErrNoText", err)
	}
	if err := Message("hi", nil); err != nil {
		t.Errorf("text only: %v", err)
	}
	if err := Message("", json.RawMessage(arr(section("hi")))); err != nil {
		t.Errorf("blocks only: %v", err)
	}
	if err := Message(rep(MaxMessageTextLen), nil); err != nil {
		t.Errorf("40000 chars: %v", err)
	}
	err := Message(rep(MaxMessageTextLen+1), nil)
	var ps *Problems
	if !errors.As(err, &ps) || ps.List[0].Pointer != "/text" || errors.Is(err, ErrNoText) {
		t.Errorf("40001 chars: got %v", err)
	}
	// Runes, not bytes.
	if err := Message(strings.Repeat("é", MaxMessageTextLen), nil); err != nil {
		t.Errorf("40000 two-byte runes: %v", err)
	}
	if err := Message("t", json.RawMessage(`{"type":"divider"}`)); err == nil {
		t.Error("blocks not an array: want error")
	}
	if err := Message("t", json.RawMessage(`[{"type":"divider"}`)); err == nil {
		t.Error("broken JSON: want error")
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	err := Message("t", json.RawMessage(arr(section(rep(3001)), `{"type":"header","text":`+md("h")+`}`)))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("got %v", err)
	}
	want := []string{
		"must be less than 3001 characters [json-pointer:/blocks/0/text/text]",
		`must be plain_text, got "mrkdwn" [json-pointer:/blocks/1/text/type]`,
	}
	got := ps.Strings()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(err.Error(), want[0]) || !strings.Contains(err.Error(), want[1]) {
		t.Errorf("Error() = %q lacks a problem", err.Error())
	}
}

func TestBlocks(t *testing.T) {
	t.Parallel()
	runCases(t, []testCase{
		{name: "50 blocks", json: repeatJSON(50, `{"type":"divider"}`)},
		{name: "51 blocks", json: repeatJSON(51, `{"type":"divider"}`), want: "/blocks"},
		{name: "block not an object", json: `["divider"]`, want: "/blocks/0"},
		{name: "block without type", json: `[{"block_id":"x"}]`, want: "/blocks/0"},
		{name: "unknown block type", json: `[{"type":"table","rows":[]}]`, want: "/blocks/0/type"},
		{name: "block_id 255", json: arr(`{"type":"divider","block_id":` + q(rep(255)) + `}`)},
		{name: "block_id 256", json: arr(`{"type":"divider","block_id":` + q(rep(256)) + `}`), want: "/blocks/0/block_id"},
		{name: "block_id empty", json: arr(`{"type":"divider","block_id":""}`), want: "/blocks/0/block_id"},
		{name: "block_id unique", json: arr(`{"type":"divider","block_id":"a"}`, `{"type":"divider","block_id":"b"}`)},
		{name: "block_id duplicate", json: arr(`{"type":"divider","block_id":"a"}`, `{"type":"divider","block_id":"a"}`), want: "/blocks/1/block_id"},

		{name: "text type markdown", json: arr(`{"type":"section","text":{"type":"markdown","text":"x"}}`), want: "/blocks/0/text/type"},
		{name: "text empty", json: arr(section("")), want: "/blocks/0/text/text"},
		{name: "text missing", json: arr(`{"type":"section","text":{"type":"mrkdwn"}}`), want: "/blocks/0/text"},
		{name: "text not string", json: arr(`{"type":"section","text":{"type":"mrkdwn","text":5}}`), want: "/blocks/0/text/text"},
		{name: "section text 3000", json: arr(section(rep(3000)))},
		{name: "section text 3001", json: arr(section(rep(3001))), want: "/blocks/0/text/text"},
		{name: "section text 3000 runes", json: arr(section(strings.Repeat("日", 3000)))},
		{name: "section plain_text", json: arr(`{"type":"section","text":` + pt("x") + `}`)},
		{name: "section neither text nor fields", json: arr(`{"type":"section"}`), want: "/blocks/0"},
		{name: "section fields 10", json: arr(`{"type":"section","fields":` + repeatJSON(10, md("f")) + `}`)},
		{name: "section fields 11", json: arr(`{"type":"section","fields":` + repeatJSON(11, md("f")) + `}`), want: "/blocks/0/fields"},
		{name: "section field 2000", json: arr(`{"type":"section","fields":` + arr(md(rep(2000))) + `}`)},
		{name: "section field 2001", json: arr(`{"type":"section","fields":` + arr(md(rep(2001))) + `}`), want: "/blocks/0/fields/0/text"},
		{name: "section button accessory", json: arr(`{"type":"section","text":` + md("x") + `,"accessory":` + button("Go") + `}`)},
		{name: "section bad accessory", json: arr(`{"type":"section","text":` + md("x") + `,"accessory":{"type":"button","text":` + pt(rep(76)) + `}}`), want: "/blocks/0/accessory/text/text"},
		{name: "section input accessory", json: arr(`{"type":"section","text":` + md("x") + `,"accessory":{"type":"plain_text_input"}}`), want: "/blocks/0/accessory/type"},

		{name: "actions 25", json: arr(`{"type":"actions","elements":` + repeatJSON(25, `{"type":"button","text":`+pt("b")+`}`) + `}`)},
		{name: "actions 26", json: arr(`{"type":"actions","elements":` + repeatJSON(26, `{"type":"button","text":`+pt("b")+`}`) + `}`), want: "/blocks/0/elements"},
		{name: "actions empty", json: arr(`{"type":"actions","elements":[]}`), want: "/blocks/0/elements"},
		{name: "actions missing elements", json: arr(`{"type":"actions"}`), want: "/blocks/0"},
		{name: "actions plain_text_input", json: withElement(`{"type":"plain_text_input","action_id":"x"}`), want: "/blocks/0/elements/0/type"},
		{name: "actions unknown element", json: withElement(`{"type":"datepicker","action_id":"x"}`), want: "/blocks/0/elements/0/type"},
		{name: "action_id 255", json: withElement(`{"type":"button","action_id":` + q(rep(255)) + `,"text":` + pt("b") + `}`)},
		{name: "action_id 256", json: withElement(`{"type":"button","action_id":` + q(rep(256)) + `,"text":` + pt("b") + `}`), want: "/blocks/0/elements/0/action_id"},
		{name: "action_id duplicate in block", json: arr(actions(button("a"), button("b"))), want: "/blocks/0/elements/1/action_id"},
		{name: "action_id same in two blocks", json: arr(actions(button("a")), actions(button("b")))},

		{name: "header 150", json: arr(`{"type":"header","text":` + pt(rep(150)) + `}`)},
		{name: "header 151", json: arr(`{"type":"header","text":` + pt(rep(151)) + `}`), want: "/blocks/0/text/text"},
		{name: "header mrkdwn", json: arr(`{"type":"header","text":` + md("h") + `}`), want: "/blocks/0/text/type"},
		{name: "header without text", json: arr(`{"type":"header"}`), want: "/blocks/0"},

		{name: "context 10", json: arr(`{"type":"context","elements":` + repeatJSON(10, md("c")) + `}`)},
		{name: "context 11", json: arr(`{"type":"context","elements":` + repeatJSON(11, md("c")) + `}`), want: "/blocks/0/elements"},
		{name: "context image", json: arr(`{"type":"context","elements":[{"type":"image","image_url":"https://x/y.png","alt_text":"y"}]}`)},
		{name: "context bad text", json: arr(`{"type":"context","elements":[{"type":"button","text":"x"}]}`), want: "/blocks/0/elements/0/type"},

		{name: "divider", json: arr(`{"type":"divider"}`)},
		{name: "image block", json: arr(`{"type":"image","image_url":"https://x/y.png","alt_text":"y","title":` + pt("t") + `}`)},
		{name: "image block without alt_text", json: arr(`{"type":"image","image_url":"https://x/y.png"}`), want: "/blocks/0"},
		{name: "image block without url", json: arr(`{"type":"image","alt_text":"y"}`), want: "/blocks/0"},

		{name: "input in message", json: arr(input(`{"type":"plain_text_input","action_id":"x"}`)), want: "/blocks/0/type"},

		{name: "markdown block", json: arr(`{"type":"markdown","text":"# Plan\n\n- a"}`)},
		{name: "markdown blocks 12000 total", json: arr(`{"type":"markdown","text":`+q(rep(6000))+`}`, `{"type":"markdown","text":`+q(rep(6000))+`}`)},
		{name: "markdown blocks 12001 total", json: arr(`{"type":"markdown","text":`+q(rep(6000))+`}`, `{"type":"markdown","text":`+q(rep(6001))+`}`), want: "/blocks"},
		{name: "markdown block empty", json: arr(`{"type":"markdown","text":""}`), want: "/blocks/0/text"},
		{name: "markdown block text counts", json: arr(`{"type":"markdown","text":`+q(rep(10000))+`}`, section(rep(2000)))},
		{name: "markdown block text counts 12001", json: arr(`{"type":"markdown","text":`+q(rep(10000))+`}`, section(rep(2001))), want: "/blocks"},

		{name: "block text 12000 total", json: arr(section(rep(3000)), section(rep(3000)), section(rep(3000)), section(rep(3000)))},
		{name: "block text 12001 total", json: arr(section(rep(3000)), section(rep(3000)), section(rep(3000)), section(rep(3000)), section("a")), want: "/blocks"},

		{name: "rich_text", json: `[{"type":"rich_text","block_id":"Sesm","elements":[{"type":"rich_text_section","elements":[{"type":"user","user_id":"U111"},{"type":"text","text":" hi","style":{"bold":true}}]},{"type":"rich_text_list","style":"bullet","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"one"}]}]},{"type":"rich_text_preformatted","elements":[{"type":"text","text":"code"}]}]}]`},
		{name: "rich_text unknown element", json: `[{"type":"rich_text","elements":[{"type":"rich_text_table","elements":[]}]}]`, want: "/blocks/0/elements/0/type"},
		{name: "rich_text list of text", json: `[{"type":"rich_text","elements":[{"type":"rich_text_list","style":"bullet","elements":[{"type":"text","text":"x"}]}]}]`, want: "/blocks/0/elements/0/elements/0/type"},
		{name: "rich_text text counts", json: `[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":` + q(rep(12001)) + `}]}]}]`, want: "/blocks"},
	})
}

func TestElements(t *testing.T) {
	t.Parallel()
	btn := func(extra string) string {
		return withElement(`{"type":"button","action_id":"b","text":` + pt("Go") + extra + `}`)
	}
	el := func(typ, extra string) string {
		return withElement(`{"type":"` + typ + `","action_id":"e"` + extra + `}`)
	}
	runCases(t, []testCase{
		{name: "button", json: btn(`,"value":"v","style":"primary"`)},
		{name: "button without text", json: withElement(`{"type":"button","action_id":"b"}`), want: "/blocks/0/elements/0"},
		{name: "button text 75", json: withElement(`{"type":"button","text":` + pt(rep(75)) + `}`)},
		{name: "button text 76", json: withElement(`{"type":"button","text":` + pt(rep(76)) + `}`), want: "/blocks/0/elements/0/text/text"},
		{name: "button text mrkdwn", json: withElement(`{"type":"button","text":` + md("Go") + `}`), want: "/blocks/0/elements/0/text/type"},
		{name: "button value 2000", json: btn(`,"value":` + q(rep(2000)))},
		{name: "button value 2001", json: btn(`,"value":` + q(rep(2001))), want: "/blocks/0/elements/0/value"},
		{name: "button style danger", json: btn(`,"style":"danger"`)},
		{name: "button style default", json: btn(`,"style":"default"`), want: "/blocks/0/elements/0/style"},
		{name: "button url 3000", json: btn(`,"url":` + q(rep(3000)))},
		{name: "button url 3001", json: btn(`,"url":` + q(rep(3001))), want: "/blocks/0/elements/0/url"},
		{name: "button accessibility_label 75", json: btn(`,"accessibility_label":` + q(rep(75)))},
		{name: "button accessibility_label 76", json: btn(`,"accessibility_label":` + q(rep(76))), want: "/blocks/0/elements/0/accessibility_label"},

		{name: "confirm", json: btn(`,"confirm":` + confirm(rep(100), rep(300), rep(30), rep(30)))},
		{name: "confirm title 101", json: btn(`,"confirm":` + confirm(rep(101), "t", "y", "n")), want: "/blocks/0/elements/0/confirm/title/text"},
		{name: "confirm text 301", json: btn(`,"confirm":` + confirm("t", rep(301), "y", "n")), want: "/blocks/0/elements/0/confirm/text/text"},
		{name: "confirm confirm 31", json: btn(`,"confirm":` + confirm("t", "t", rep(31), "n")), want: "/blocks/0/elements/0/confirm/confirm/text"},
		{name: "confirm deny 31", json: btn(`,"confirm":` + confirm("t", "t", "y", rep(31))), want: "/blocks/0/elements/0/confirm/deny/text"},
		{name: "confirm without deny", json: btn(`,"confirm":{"title":` + pt("t") + `,"text":` + pt("t") + `,"confirm":` + pt("y") + `}`), want: "/blocks/0/elements/0/confirm"},

		{name: "checkboxes 10", json: el("checkboxes", `,"options":`+opts(10))},
		{name: "checkboxes 11", json: el("checkboxes", `,"options":`+opts(11)), want: "/blocks/0/elements/0/options"},
		{name: "checkboxes 0", json: el("checkboxes", `,"options":[]`), want: "/blocks/0/elements/0/options"},
		{name: "checkboxes missing options", json: el("checkboxes", ``), want: "/blocks/0/elements/0"},
		{name: "checkboxes mrkdwn option", json: el("checkboxes", `,"options":[{"text":`+md("*a*")+`,"value":"a","description":`+md("_d_")+`}]`)},
		{name: "checkboxes initial_options", json: el("checkboxes", `,"options":`+opts(3)+`,"initial_options":`+arr(opt("o1", "v1")))},
		{name: "checkboxes initial_options not an option", json: el("checkboxes", `,"options":`+opts(3)+`,"initial_options":`+arr(opt("o1", "v2"))), want: "/blocks/0/elements/0/initial_options/0"},
		{name: "radio 10", json: el("radio_buttons", `,"options":`+opts(10))},
		{name: "radio 11", json: el("radio_buttons", `,"options":`+opts(11)), want: "/blocks/0/elements/0/options"},
		{name: "radio initial_option", json: el("radio_buttons", `,"options":`+opts(2)+`,"initial_option":`+opt("o0", "v0"))},
		{name: "radio initial_option not an option", json: el("radio_buttons", `,"options":`+opts(2)+`,"initial_option":`+opt("zz", "v0")), want: "/blocks/0/elements/0/initial_option"},
		{name: "overflow 5", json: el("overflow", `,"options":`+opts(5))},
		{name: "overflow 6", json: el("overflow", `,"options":`+opts(6)), want: "/blocks/0/elements/0/options"},
		{name: "overflow 0", json: el("overflow", `,"options":[]`), want: "/blocks/0/elements/0/options"},
		{name: "overflow option url", json: el("overflow", `,"options":[{"text":`+pt("a")+`,"value":"a","url":"https://x"}]`)},
		{name: "overflow mrkdwn option", json: el("overflow", `,"options":[{"text":`+md("a")+`,"value":"a"}]`), want: "/blocks/0/elements/0/options/0/text/type"},

		{name: "static_select 100", json: el("static_select", `,"placeholder":`+pt("Pick")+`,"options":`+opts(100))},
		{name: "static_select 101", json: el("static_select", `,"options":`+opts(101)), want: "/blocks/0/elements/0/options"},
		{name: "static_select option_groups", json: el("static_select", `,"option_groups":[{"label":`+pt("G")+`,"options":`+opts(2)+`}]`)},
		{name: "static_select 101 option_groups", json: el("static_select", `,"option_groups":`+repeatJSON(101, `{"label":`+pt("G")+`,"options":[`+opt("a", "a")+`]}`)), want: "/blocks/0/elements/0/option_groups"},
		{name: "static_select options and groups", json: el("static_select", `,"options":`+opts(1)+`,"option_groups":[{"label":`+pt("G")+`,"options":`+opts(1)+`}]`), want: "/blocks/0/elements/0"},
		{name: "static_select group label 76", json: el("static_select", `,"option_groups":[{"label":`+pt(rep(76))+`,"options":`+opts(1)+`}]`), want: "/blocks/0/elements/0/option_groups/0/label/text"},
		{name: "static_select value unique across groups", json: el("static_select", `,"option_groups":[{"label":`+pt("G")+`,"options":`+opts(1)+`},{"label":`+pt("H")+`,"options":`+opts(1)+`}]`), want: "/blocks/0/elements/0/option_groups/1/options"},
		{name: "static_select mrkdwn option", json: el("static_select", `,"options":[{"text":`+md("a")+`,"value":"a"}]`), want: "/blocks/0/elements/0/options/0/text/type"},
		{name: "static_select mrkdwn description", json: el("static_select", `,"options":[{"text":`+pt("a")+`,"value":"a","description":`+md("d")+`}]`), want: "/blocks/0/elements/0/options/0/description/type"},
		{name: "static_select option url", json: el("static_select", `,"options":[{"text":`+pt("a")+`,"value":"a","url":"https://x"}]`), want: "/blocks/0/elements/0/options/0/url"},
		{name: "static_select placeholder 150", json: el("static_select", `,"placeholder":`+pt(rep(150))+`,"options":`+opts(1))},
		{name: "static_select placeholder 151", json: el("static_select", `,"placeholder":`+pt(rep(151))+`,"options":`+opts(1)), want: "/blocks/0/elements/0/placeholder/text"},
		{name: "static_select placeholder mrkdwn", json: el("static_select", `,"placeholder":`+md("p")+`,"options":`+opts(1)), want: "/blocks/0/elements/0/placeholder/type"},
		{name: "static_select initial_option in group", json: el("static_select", `,"option_groups":[{"label":`+pt("G")+`,"options":`+opts(2)+`}],"initial_option":`+opt("o1", "v1"))},
		{name: "multi_static_select", json: el("multi_static_select", `,"options":`+opts(3)+`,"max_selected_items":1,"initial_options":`+arr(opt("o0", "v0")))},
		{name: "multi_static_select max_selected_items 0", json: el("multi_static_select", `,"options":`+opts(3)+`,"max_selected_items":0`), want: "/blocks/0/elements/0/max_selected_items"},
		{name: "multi_static_select max_selected_items string", json: el("multi_static_select", `,"options":`+opts(3)+`,"max_selected_items":"2"`), want: "/blocks/0/elements/0/max_selected_items"},
		{name: "multi_static_select initial not an option", json: el("multi_static_select", `,"options":`+opts(3)+`,"initial_options":`+arr(opt("o9", "v9"))), want: "/blocks/0/elements/0/initial_options/0"},
		{name: "users_select", json: el("users_select", `,"placeholder":`+pt("Who")+``)},
		{name: "multi_users_select max 0", json: el("multi_users_select", `,"max_selected_items":0`), want: "/blocks/0/elements/0/max_selected_items"},
		{name: "conversations_select", json: el("conversations_select", ``)},

		{name: "option text 75", json: el("checkboxes", `,"options":`+arr(opt(rep(75), "v")))},
		{name: "option text 76", json: el("checkboxes", `,"options":`+arr(opt(rep(76), "v"))), want: "/blocks/0/elements/0/options/0/text/text"},
		{name: "option value 75", json: el("checkboxes", `,"options":`+arr(opt("t", rep(75))))},
		{name: "option value 76", json: el("checkboxes", `,"options":`+arr(opt("t", rep(76)))), want: "/blocks/0/elements/0/options/0/value"},
		{name: "option value missing", json: el("checkboxes", `,"options":[{"text":`+pt("t")+`}]`), want: "/blocks/0/elements/0/options/0"},
		{name: "option description 75", json: el("checkboxes", `,"options":[{"text":`+pt("t")+`,"value":"v","description":`+pt(rep(75))+`}]`)},
		{name: "option description 76", json: el("checkboxes", `,"options":[{"text":`+pt("t")+`,"value":"v","description":`+pt(rep(76))+`}]`), want: "/blocks/0/elements/0/options/0/description/text"},
		{name: "option values duplicate", json: el("checkboxes", `,"options":`+arr(opt("a", "v"), opt("b", "v"))), want: "/blocks/0/elements/0/options/1/value"},
	})
}

func TestView(t *testing.T) {
	t.Parallel()
	textInput := func(extra string) string {
		return input(`{"type":"plain_text_input","action_id":"x"` + extra + `}`)
	}
	runCases(t, []testCase{
		{name: "modal", view: true, json: modal(section("hi"), textInput(`,"multiline":true`))},
		{name: "home", view: true, json: `{"type":"home","blocks":[]}`, want: "/view/type"},
		{name: "not an object", view: true, json: `[]`, want: "/view"},
		{name: "no blocks", view: true, json: `{"type":"modal","title":` + pt("T") + `}`, want: "/view"},
		{name: "title missing", view: true, json: `{"type":"modal","blocks":[]}`, want: "/view"},
		{name: "title 24", view: true, json: `{"type":"modal","title":` + pt(rep(24)) + `,"blocks":[]}`},
		{name: "title 25", view: true, json: `{"type":"modal","title":` + pt(rep(25)) + `,"blocks":[]}`, want: "/view/title/text"},
		{name: "title mrkdwn", view: true, json: `{"type":"modal","title":` + md("T") + `,"blocks":[]}`, want: "/view/title/type"},
		{name: "submit 25", view: true, json: `{"type":"modal","title":` + pt("T") + `,"submit":` + pt(rep(25)) + `,"blocks":[]}`, want: "/view/submit/text"},
		{name: "close 24", view: true, json: `{"type":"modal","title":` + pt("T") + `,"close":` + pt(rep(24)) + `,"blocks":[]}`},
		{name: "close 25", view: true, json: `{"type":"modal","title":` + pt("T") + `,"close":` + pt(rep(25)) + `,"blocks":[]}`, want: "/view/close/text"},
		{name: "input without submit", view: true, json: `{"type":"modal","title":` + pt("T") + `,"blocks":[` + textInput("") + `]}`, want: "/view/submit"},
		{name: "sections without submit", view: true, json: `{"type":"modal","title":` + pt("T") + `,"blocks":[` + section("x") + `]}`},
		{name: "private_metadata 3000", view: true, json: `{"type":"modal","title":` + pt("T") + `,"private_metadata":` + q(rep(3000)) + `,"blocks":[]}`},
		{name: "private_metadata 3001", view: true, json: `{"type":"modal","title":` + pt("T") + `,"private_metadata":` + q(rep(3001)) + `,"blocks":[]}`, want: "/view/private_metadata"},
		{name: "callback_id 255", view: true, json: `{"type":"modal","title":` + pt("T") + `,"callback_id":` + q(rep(255)) + `,"blocks":[]}`},
		{name: "callback_id 256", view: true, json: `{"type":"modal","title":` + pt("T") + `,"callback_id":` + q(rep(256)) + `,"blocks":[]}`, want: "/view/callback_id"},
		{name: "external_id 256", view: true, json: `{"type":"modal","title":` + pt("T") + `,"external_id":` + q(rep(256)) + `,"blocks":[]}`, want: "/view/external_id"},
		{name: "notify_on_close not bool", view: true, json: `{"type":"modal","title":` + pt("T") + `,"notify_on_close":"yes","blocks":[]}`, want: "/view/notify_on_close"},
		{name: "100 blocks", view: true, json: `{"type":"modal","title":` + pt("T") + `,"blocks":` + repeatJSON(100, `{"type":"divider"}`) + `}`},
		{name: "101 blocks", view: true, json: `{"type":"modal","title":` + pt("T") + `,"blocks":` + repeatJSON(101, `{"type":"divider"}`) + `}`, want: "/view/blocks"},
		{name: "too large", view: true, json: `{"type":"modal","title":` + pt("T") + `,"blocks":` + repeatJSON(99, section(rep(2600))) + `}`, want: "/view"},
		{name: "markdown block", view: true, json: modal(`{"type":"markdown","text":"x"}`), want: "/view/blocks/0/type"},
		{name: "block ids unique", view: true, json: modal(`{"type":"divider","block_id":"a"}`, `{"type":"divider","block_id":"a"}`), want: "/view/blocks/1/block_id"},
		// Block text above the message cap is fine in a modal.
		{name: "much text", view: true, json: modal(section(rep(3000)), section(rep(3000)), section(rep(3000)), section(rep(3000)), section(rep(3000)))},

		{name: "input label 2000", view: true, json: modal(`{"type":"input","label":` + pt(rep(2000)) + `,"element":{"type":"plain_text_input"}}`)},
		{name: "input label 2001", view: true, json: modal(`{"type":"input","label":` + pt(rep(2001)) + `,"element":{"type":"plain_text_input"}}`), want: "/view/blocks/0/label/text"},
		{name: "input label missing", view: true, json: modal(`{"type":"input","element":{"type":"plain_text_input"}}`), want: "/view/blocks/0"},
		{name: "input hint 2000", view: true, json: modal(`{"type":"input","label":` + pt("L") + `,"hint":` + pt(rep(2000)) + `,"element":{"type":"plain_text_input"}}`)},
		{name: "input hint 2001", view: true, json: modal(`{"type":"input","label":` + pt("L") + `,"hint":` + pt(rep(2001)) + `,"element":{"type":"plain_text_input"}}`), want: "/view/blocks/0/hint/text"},
		{name: "input without element", view: true, json: modal(`{"type":"input","label":` + pt("L") + `}`), want: "/view/blocks/0"},
		{name: "input with button", view: true, json: modal(input(button("b"))), want: "/view/blocks/0/element/type"},
		{name: "input checkboxes", view: true, json: modal(input(`{"type":"checkboxes","action_id":"c","options":` + opts(3) + `}`))},
		{name: "input multi_static_select", view: true, json: modal(input(`{"type":"multi_static_select","action_id":"c","options":` + opts(3) + `}`))},
		{name: "placeholder 150", view: true, json: modal(textInput(`,"placeholder":` + pt(rep(150))))},
		{name: "placeholder 151", view: true, json: modal(textInput(`,"placeholder":` + pt(rep(151)))), want: "/view/blocks/0/element/placeholder/text"},
		{name: "min_length 3000", view: true, json: modal(textInput(`,"min_length":3000`))},
		{name: "min_length 3001", view: true, json: modal(textInput(`,"min_length":3001`)), want: "/view/blocks/0/element/min_length"},
		{name: "max_length >= min_length", view: true, json: modal(textInput(`,"min_length":5,"max_length":5`))},
		{name: "max_length < min_length", view: true, json: modal(textInput(`,"min_length":5,"max_length":4`)), want: "/view/blocks/0/element/max_length"},
		{name: "max_length 0", view: true, json: modal(textInput(`,"max_length":0`)), want: "/view/blocks/0/element/max_length"},
		{name: "min_length fraction", view: true, json: modal(textInput(`,"min_length":1.5`)), want: "/view/blocks/0/element/min_length"},
	})
}

// Every block of a real message, as Slack delivered it, passes.
func TestRealPayloadBlocks(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/block_actions_button.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Message struct {
			Text   string          `json:"text"`
			Blocks json.RawMessage `json:"blocks"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(p.Message.Blocks, &blocks); err != nil || len(blocks) == 0 {
		t.Fatalf("no blocks in sample: %v", err)
	}
	if err := Message(p.Message.Text, p.Message.Blocks); err != nil {
		t.Errorf("whole message: %v", err)
	}
	for i, b := range blocks {
		if err := Message("", json.RawMessage("["+string(b)+"]")); err != nil {
			t.Errorf("block %d: %v", i, err)
		}
	}
}

// Every problem is listed, not just the first.
func TestAllProblemsListed(t *testing.T) {
	t.Parallel()
	err := View(json.RawMessage(`{"type":"modal","title":` + pt(rep(30)) + `,"callback_id":` + q(rep(300)) + `,"blocks":[` + section("") + `,{"type":"nope"}]}`))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("got %v", err)
	}
	want := []string{"/view/title/text", "/view/callback_id", "/view/blocks/0/text/text", "/view/blocks/1/type"}
	var got []string
	for _, p := range ps.List {
		got = append(got, p.Pointer)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pointers %v, want %v", got, want)
	}
}

func FuzzMessage(f *testing.F) {
	f.Add("t", arr(section("x"), actions(button("a"))))
	f.Add("", `[{"type":"rich_text","elements":[{"type":"rich_text_list","elements":[1]}]}]`)
	f.Add("", `[{"type":"section","fields":[null],"accessory":{"type":"static_select","option_groups":[{"options":[{}]}],"initial_option":7}}]`)
	f.Fuzz(func(t *testing.T, text, blocks string) {
		_ = Message(text, json.RawMessage(blocks))
		_ = View(json.RawMessage(blocks))
	})
}
